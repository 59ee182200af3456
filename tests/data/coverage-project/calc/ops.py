"""Arithmetic helpers. Some branches are left untested on purpose."""


def add(a, b):
    return a + b


def divide(a, b):
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a / b


def sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


def clamp(x, low, high):
    if low > high:
        raise ValueError("low > high")
    if x < low:
        return low
    if x > high:
        return high
    return x
