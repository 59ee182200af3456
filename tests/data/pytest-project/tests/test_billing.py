from decimal import Decimal

import pytest

from billing import line_total, round_money


@pytest.fixture
def exchange_rates():
    # The erroring fixture: setup fails, so pytest reports an error, not a failure.
    raise ConnectionError("rates service unreachable")


class TestInvoice:
    @pytest.mark.parametrize(
        ("unit_price", "quantity", "expected"),
        [
            pytest.param("9.99", 1, Decimal("9.99"), id="p-1"),
            pytest.param("9.99", 3, Decimal("29.97"), id="p-2"),
        ],
    )
    def test_total(self, unit_price, quantity, expected):
        assert line_total(unit_price, quantity) == expected

    def test_empty_invoice_is_zero(self):
        assert line_total("0", 5) == 0

    def test_discount_applies(self):
        # The one genuinely failing test: 10% off 20.00 is 18.00, not 17.00.
        assert line_total("20.00", 1) * Decimal("0.9") == Decimal("17.00")


@pytest.mark.parametrize("label", ["EUR", "net<gross"])
def test_rounding(label):
    assert round_money(Decimal("2.675")) == Decimal("2.68"), label


@pytest.mark.skip(reason="tax tables not published yet")
def test_vat_table():
    raise AssertionError("never runs")


@pytest.mark.xfail(reason="banker's rounding is not what finance wants", strict=False)
def test_round_half_up():
    assert round_money(Decimal("0.125")) == Decimal("0.13")


def test_converts_currency(exchange_rates):
    assert exchange_rates["EUR"] == 1
