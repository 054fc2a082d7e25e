import math

import pytest

from window_stats import SlidingWindow

STREAM = [(i * 37) % 23 - 11 for i in range(200)]


def brute(stream, size):
    """(min, max, mean) after each push, computed naively."""
    out = []
    for i in range(len(stream)):
        win = stream[max(0, i + 1 - size): i + 1]
        out.append((min(win), max(win), sum(win) / len(win)))
    return out


def test_example_from_spec():
    w = SlidingWindow(3)
    w.extend([5, 1, 4, 2])
    assert w.values() == [1, 4, 2]
    assert (w.min(), w.max()) == (1, 4)
    assert w.mean() == pytest.approx(7 / 3)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 50, 500])
def test_matches_brute_force(size):
    w = SlidingWindow(size)
    for value, expected in zip(STREAM, brute(STREAM, size)):
        w.push(value)
        assert (w.min(), w.max()) == expected[:2]
        assert w.mean() == pytest.approx(expected[2])


def test_monotone_streams():
    up = list(range(30))
    down = list(range(30, 0, -1))
    for stream in (up, down):
        w = SlidingWindow(4)
        for value, expected in zip(stream, brute(stream, 4)):
            w.push(value)
            assert (w.min(), w.max()) == expected[:2]


def test_oldest_extreme_leaves_exactly_on_time():
    w = SlidingWindow(3)
    w.extend([1, 9, 5])
    assert (w.min(), w.max()) == (1, 9)
    w.push(6)
    assert (w.min(), w.max()) == (5, 9)
    w.push(7)
    assert (w.min(), w.max()) == (5, 7)


def test_repeated_equal_values():
    w = SlidingWindow(2)
    w.extend([3, 3, 3, 1, 1, 4])
    assert w.values() == [1, 4]
    assert (w.min(), w.max()) == (1, 4)


def test_len_and_values_before_and_after_full():
    w = SlidingWindow(4)
    assert len(w) == 0
    assert w.values() == []
    w.extend([1, 2])
    assert len(w) == 2
    assert w.values() == [1, 2]
    w.extend([3, 4, 5, 6])
    assert len(w) == 4
    assert w.values() == [3, 4, 5, 6]


def test_mean_of_partial_window_uses_current_count():
    w = SlidingWindow(10)
    w.extend([2, 4])
    assert w.mean() == 3.0
    assert isinstance(w.mean(), float)


def test_mean_after_eviction():
    w = SlidingWindow(2)
    w.extend([100, 1, 3])
    assert w.mean() == 2.0


def test_mean_returns_float_for_ints():
    w = SlidingWindow(3)
    w.extend([1, 2, 3])
    assert w.mean() == 2.0
    assert type(w.mean()) is float


def test_floats_and_negatives():
    w = SlidingWindow(3)
    w.extend([-1.5, 2.25, -0.75])
    assert w.min() == -1.5
    assert w.max() == 2.25
    assert w.mean() == pytest.approx(0.0)


def test_empty_window_queries_raise_value_error():
    w = SlidingWindow(3)
    for query in (w.min, w.max, w.mean):
        with pytest.raises(ValueError):
            query()


def test_clear_empties_but_keeps_size_and_ops():
    w = SlidingWindow(3)
    w.extend([10, -10, 5])
    ops = w.ops
    w.clear()
    assert len(w) == 0
    assert w.ops == ops
    with pytest.raises(ValueError):
        w.min()
    w.extend([1, 2])
    assert (w.min(), w.max()) == (1, 2)
    assert w.mean() == 1.5
    w.extend([3, 4])
    assert w.values() == [2, 3, 4]


def test_clear_forgets_old_extremes():
    w = SlidingWindow(4)
    w.extend([5, -10])
    w.clear()
    w.extend([1, 2])
    assert (w.min(), w.max()) == (1, 2)
    w.clear()
    w.extend([50, 60, -5])
    w.clear()
    w.push(0)
    assert (w.min(), w.max()) == (0, 0)


@pytest.mark.parametrize("size, exc", [(0, ValueError), (-3, ValueError), (True, TypeError),
                                       (2.0, TypeError), ("3", TypeError), (None, TypeError)])
def test_bad_sizes(size, exc):
    with pytest.raises(exc):
        SlidingWindow(size)


def test_size_one_window():
    w = SlidingWindow(1)
    w.extend([4, -2, 7])
    assert w.values() == [7]
    assert (w.min(), w.max(), w.mean()) == (7, 7, 7.0)


@pytest.mark.parametrize("bad", [True, "1", None, [1], 1j])
def test_bad_values_are_type_errors_and_change_nothing(bad):
    w = SlidingWindow(2)
    w.extend([1, 2])
    with pytest.raises(TypeError):
        w.push(bad)
    assert w.values() == [1, 2]
    assert w.mean() == 1.5


def test_nan_is_value_error():
    w = SlidingWindow(2)
    w.push(1.0)
    with pytest.raises(ValueError):
        w.push(float("nan"))
    assert w.values() == [1.0]


def test_extend_stops_at_first_bad_value():
    w = SlidingWindow(5)
    with pytest.raises(TypeError):
        w.extend([1, 2, "x", 4])
    assert w.values() == [1, 2]


def test_ops_start_at_zero_and_queries_without_comparisons():
    w = SlidingWindow(5)
    assert w.ops == 0
    w.extend([3, 1, 2])
    before = w.ops
    w.mean()
    w.values()
    len(w)
    w.clear()
    assert w.ops == before


@pytest.mark.parametrize("size", [1, 7, 64, 1000])
def test_upper_bound_amortised(size):
    w = SlidingWindow(size)
    stream = STREAM * 3 + list(range(300)) + list(range(300, 0, -1))
    queries = 0
    for value in stream:
        w.push(value)
        w.min()
        w.max()
        queries += 2
    assert w.ops <= 4 * len(stream) + queries


def test_upper_bound_with_clears():
    w = SlidingWindow(16)
    pushes = 0
    for round_ in range(10):
        w.extend(range(round_, round_ + 40))
        pushes += 40
        w.clear()
    assert w.ops <= 4 * pushes


@pytest.mark.parametrize("stream", [list(range(20)), list(range(20, 0, -1)), STREAM[:40], [7] * 20])
def test_lower_bound_honest_counting(stream):
    n = len(stream)
    w = SlidingWindow(n)
    w.extend(stream)
    assert w.min() == min(stream)
    assert w.max() == max(stream)
    assert w.ops >= math.ceil(3 * n / 2) - 2
