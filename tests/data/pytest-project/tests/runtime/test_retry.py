from billing import backoff_delays


def test_backoff_under_load():
    delays = backoff_delays(0.1, attempts=6, cap=2.0)
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0]
    assert all(a <= b for a, b in zip(delays, delays[1:]))
