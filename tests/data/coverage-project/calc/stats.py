"""Statistics helpers. `median` is never tested, so its lines count as missed."""


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("median of nothing")
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
