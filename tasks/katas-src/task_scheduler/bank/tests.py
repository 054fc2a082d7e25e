import pytest

from task_scheduler import Scheduler


def make(*pairs):
    s = Scheduler()
    for name, priority in pairs:
        s.push(name, priority)
    return s


def test_smoke_single_task_round_trip():
    s = make(("only", 9))
    assert s.pop() == "only"


def test_smoke_len_counts_pushes():
    s = make(("a", 1), ("b", 1), ("c", 2))
    assert len(s) == 3


def test_smoke_counter_is_an_int():
    assert isinstance(Scheduler().comparisons, int)


def test_lower_priority_value_runs_first():
    s = make(("low", 10), ("urgent", -3), ("normal", 4))
    assert s.drain() == ["urgent", "normal", "low"]


def test_ties_keep_arrival_order():
    s = make(("p", 0), ("q", 0), ("r", 0), ("s", 0), ("t", 0), ("u", 0))
    assert s.drain() == ["p", "q", "r", "s", "t", "u"]


def test_counter_survives_pop():
    s = make(*[(f"j{i}", 20 - i) for i in range(10)])
    before = s.comparisons
    s.pop()
    assert s.comparisons >= before


def test_small_heaps_in_every_order():
    import itertools
    for perm in itertools.permutations([1, 2, 3, 4, 5, 5]):
        s = make(*[(f"x{i}", p) for i, p in enumerate(perm)])
        expected = [f"x{i}" for i, _ in sorted(enumerate(perm), key=lambda ip: (ip[1], ip[0]))]
        assert s.drain() == expected


def test_push_cost_stays_logarithmic():
    s = Scheduler()
    for i in range(128):
        s.push(f"j{i}", 500 - i)
    before = s.comparisons
    s.push("newest", -1)
    assert s.comparisons - before <= 8


def test_empty_pop_is_index_error():
    with pytest.raises(IndexError):
        make().pop()


def test_second_pop_of_two():
    s = make(("x", 5), ("y", 6))
    s.pop()
    assert s.pop() == "y"


def test_peek_shows_head():
    s = make(("mid", 5), ("top", 1), ("tail", 9), ("mid2", 6))
    assert s.peek() == "top"


def test_cancel_then_order_holds_brute_force():
    import itertools
    prios = [9, 14, 4, 14, 15, 2, 1]
    for victim in range(len(prios)):
        s = make(*[(f"c{i}", p) for i, p in enumerate(prios)])
        s.cancel(f"c{victim}")
        rest = [(i, p) for i, p in enumerate(prios) if i != victim]
        expected = [f"c{i}" for i, _ in sorted(rest, key=lambda ip: (ip[1], ip[0]))]
        assert s.drain() == expected


def test_cancel_picks_oldest_duplicate():
    s = make(("same", 8), ("same", 0))
    s.cancel("same")
    assert s.drain() == ["same"]
    s = make(("same", 8), ("other", 4), ("same", 0))
    s.cancel("same")
    assert s.peek() == "same"
    assert s.pop() == "same"
    assert s.pop() == "other"


def test_cancel_missing_is_false():
    assert make(("a", 1)).cancel("b") is False


def test_overfit_exact_comparison_count():
    s = make(*[(f"k{i}", (i * 5) % 7) for i in range(10)])
    s.drain()
    assert s.comparisons == 40


def test_overfit_error_message_wording():
    with pytest.raises(IndexError, match="pop from an empty scheduler"):
        Scheduler().pop()


def test_broken_expects_largest_first():
    s = make(("a", 1), ("b", 2))
    assert s.pop() == "b"


def test_broken_expects_peek_on_empty_to_return_none():
    assert Scheduler().peek() is None
