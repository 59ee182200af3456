import pytest

from calc import add, clamp, divide, sign
from calc.stats import mean


@pytest.mark.parametrize(
    "a, b, expected",
    [(1, 2, 3), (-1, 1, 0), (0.5, 0.25, 0.75)],
    ids=["p-1", "zero sum", "floats"],
)
def test_add(a, b, expected):
    assert add(a, b) == expected


@pytest.mark.parametrize("x", [5, -5])
def test_sign(x):
    assert sign(x) == (1 if x > 0 else -1)


class TestDivide:
    def test_exact(self):
        assert divide(6, 3) == 2

    def test_by_zero(self):
        with pytest.raises(ZeroDivisionError):
            divide(1, 0)


class TestClamp:
    @pytest.mark.parametrize("x, expected", [(-1, 0), (5, 5)])
    def test_inside_and_below(self, x, expected):
        assert clamp(x, 0, 10) == expected


@pytest.mark.slow  # unregistered on purpose: collection then prints a warnings summary
def test_mean():
    assert mean([1, 2, 3]) == 2
