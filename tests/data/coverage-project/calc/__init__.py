"""A tiny calculator package, measured by tests/test_calc.py for merge-guard's samples."""

from calc.ops import add, clamp, divide, sign

__all__ = ["add", "clamp", "divide", "sign"]
