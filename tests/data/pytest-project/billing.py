"""A tiny invoicing module for the sample test suite."""

from decimal import ROUND_HALF_EVEN, Decimal


def line_total(unit_price: str, quantity: int) -> Decimal:
    return Decimal(unit_price) * quantity


def round_money(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)


def backoff_delays(base: float, attempts: int, cap: float) -> list[float]:
    return [min(cap, base * 2**i) for i in range(attempts)]


def encode(record: dict) -> str:
    """Encodes a flat record as `key=value` pairs joined by `;`, escaping both separators."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace(";", "\\;").replace("=", "\\=")

    return ";".join(f"{esc(k)}={esc(str(v))}" for k, v in sorted(record.items()))


def decode(text: str) -> dict:
    record, key, buf, escaped = {}, None, [], False
    for ch in text:
        if escaped:
            buf.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "=" and key is None:
            key, buf = "".join(buf), []
        elif ch == ";":
            record[key] = "".join(buf)
            key, buf = None, []
        else:
            buf.append(ch)
    if key is not None:
        record[key] = "".join(buf)
    return record
