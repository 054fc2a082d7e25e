import math

import pytest

from window_stats import SlidingWindow


def window(size, values):
    w = SlidingWindow(size)
    w.extend(values)
    return w


def test_smoke_push_and_len():
    assert len(window(3, [1])) == 1


def test_smoke_single_value_stats():
    w = window(2, [8])
    assert w.min() == 8 and w.max() == 8


def test_smoke_ops_attribute():
    assert SlidingWindow(4).ops == 0


def test_old_minimum_expires():
    w = window(2, [0, 10, 20])
    assert w.min() == 10


def test_old_maximum_expires():
    w = window(2, [30, 10, 20])
    assert w.max() == 20


def test_max_of_descending_then_rise():
    w = window(4, [40, 30, 20, 25])
    assert w.max() == 40


def test_mean_partial_fill():
    assert window(8, [1, 2, 3]).mean() == 2.0


def test_mean_after_slide():
    assert window(3, [90, 1, 2, 3]).mean() == 2.0


def test_clear_then_reuse():
    w = window(3, [-50, 0])
    w.clear()
    w.extend([4, 6])
    assert w.min() == 4


def test_honest_count_for_constant_stream():
    w = window(30, [2] * 30)
    w.min()
    w.max()
    assert w.ops >= math.ceil(3 * 30 / 2) - 2


def test_zero_size_rejected():
    with pytest.raises(ValueError):
        SlidingWindow(0)


def test_empty_min_is_value_error():
    with pytest.raises(ValueError):
        SlidingWindow(2).min()


def test_min_with_dip_inside_window():
    w = window(6, [9, 8, 10, 11, 2, 12])
    assert w.min() == 2


def test_values_oldest_first():
    assert window(3, [1, 2, 3, 4]).values() == [2, 3, 4]


def test_overfit_exact_ops_for_small_stream():
    w = window(3, [4, 2, 6, 1, 5])
    w.min()
    w.max()
    assert w.ops == 11


def test_overfit_error_text():
    with pytest.raises(ValueError, match=r"mean\(\) of an empty window"):
        SlidingWindow(3).mean()


def test_broken_expects_integer_mean():
    assert type(window(2, [2, 4]).mean()) is int


def test_broken_expects_window_to_keep_everything():
    assert window(2, [1, 2, 3]).values() == [1, 2, 3]
