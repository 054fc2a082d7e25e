import math

import pytest

from task_scheduler import Scheduler


def floor_log2(n):
    return n.bit_length() - 1


# A fixed, scrambled priority sequence (no randomness at test time).
PRIORITIES = [(i * 37) % 101 - 50 for i in range(101)] + [(i * 13) % 7 for i in range(60)]


def loaded(pairs):
    s = Scheduler()
    for name, prio in pairs:
        s.push(name, prio)
    return s


def test_empty_scheduler_has_length_zero_and_no_comparisons():
    s = Scheduler()
    assert len(s) == 0
    assert s.comparisons == 0


def test_pop_returns_smallest_priority_first():
    s = loaded([("c", 3), ("a", 1), ("b", 2)])
    assert [s.pop(), s.pop(), s.pop()] == ["a", "b", "c"]
    assert len(s) == 0


def test_negative_priorities_come_first():
    s = loaded([("zero", 0), ("minus", -5), ("plus", 5)])
    assert s.drain() == ["minus", "zero", "plus"]


def test_equal_priorities_are_fifo():
    names = [f"t{i}" for i in range(12)]
    s = loaded([(n, 4) for n in names])
    assert s.drain() == names


def test_fifo_ties_survive_interleaved_pops():
    s = Scheduler()
    s.push("a", 1)
    s.push("b", 1)
    assert s.pop() == "a"
    s.push("c", 1)
    s.push("d", 1)
    s.push("x", 0)
    assert s.drain() == ["x", "b", "c", "d"]


def test_fifo_ties_after_emptying_and_refilling():
    s = Scheduler()
    for n in "abc":
        s.push(n, 2)
    s.pop()
    s.pop()
    for n in "defg":
        s.push(n, 2)
    assert s.drain() == ["c", "d", "e", "f", "g"]


def test_drain_matches_sorted_order_on_many_tasks():
    pairs = [(f"n{i}", p) for i, p in enumerate(PRIORITIES)]
    s = loaded(pairs)
    expected = [name for name, _ in sorted(pairs, key=lambda np: (np[1], int(np[0][1:])))]
    assert s.drain() == expected
    assert len(s) == 0


def test_pop_one_at_a_time_matches_sorted_order():
    pairs = [(f"n{i}", p) for i, p in enumerate(PRIORITIES[:40])]
    s = loaded(pairs)
    expected = [name for name, _ in sorted(pairs, key=lambda np: (np[1], int(np[0][1:])))]
    got = []
    while len(s):
        assert s.peek() == expected[len(got)]
        got.append(s.pop())
    assert got == expected


def test_two_tasks_pop_both_distinct():
    s = loaded([("first", 1), ("second", 2)])
    assert s.pop() == "first"
    assert len(s) == 1
    assert s.pop() == "second"
    with pytest.raises(IndexError):
        s.pop()


def test_peek_does_not_remove_and_does_not_compare():
    s = loaded([("b", 2), ("a", 1), ("c", 3)])
    before = s.comparisons
    assert s.peek() == "a"
    assert s.peek() == "a"
    assert len(s) == 3
    assert s.comparisons == before


def test_pop_and_peek_on_empty_raise_index_error():
    s = Scheduler()
    with pytest.raises(IndexError):
        s.pop()
    with pytest.raises(IndexError):
        s.peek()
    assert s.comparisons == 0


@pytest.mark.parametrize("bad_name", [1, None, b"x", ("a",)])
def test_non_str_name_is_rejected(bad_name):
    s = Scheduler()
    with pytest.raises(TypeError):
        s.push(bad_name, 1)
    assert len(s) == 0


@pytest.mark.parametrize("bad_priority", [True, False, 1.0, "1", None])
def test_non_int_priority_is_rejected(bad_priority):
    s = loaded([("keep", 1)])
    with pytest.raises(TypeError):
        s.push("x", bad_priority)
    assert len(s) == 1
    assert s.drain() == ["keep"]


def test_duplicate_names_are_separate_tasks():
    s = loaded([("job", 3), ("job", 1), ("other", 2)])
    assert len(s) == 3
    assert s.drain() == ["job", "other", "job"]


def test_cancel_removes_earliest_pushed_of_that_name():
    s = Scheduler()
    s.push("dup", 5)
    s.push("mid", 3)
    s.push("dup", 1)
    assert s.cancel("dup") is True
    assert len(s) == 2
    # the earliest "dup" had priority 5, so the priority-1 one is still first
    assert s.drain() == ["dup", "mid"]


def test_cancel_unknown_name_returns_false_and_keeps_tasks():
    s = loaded([("a", 1), ("b", 2)])
    assert s.cancel("zzz") is False
    assert len(s) == 2
    assert s.drain() == ["a", "b"]


def test_cancel_every_position_keeps_order():
    pairs = [(f"k{i}", p) for i, p in enumerate(PRIORITIES[:31])]
    for victim in range(len(pairs)):
        s = loaded(pairs)
        assert s.cancel(f"k{victim}") is True
        rest = [pr for i, pr in enumerate(pairs) if i != victim]
        expected = [n for n, _ in sorted(rest, key=lambda np: (np[1], int(np[0][1:])))]
        assert s.drain() == expected


def test_cancel_entry_that_must_move_up():
    # Cancelling t3 moves the last entry (t6, priority 2) into a slot below a priority-27 task;
    # it has to travel up for the order to stay right.
    s = loaded([(f"t{i}", p) for i, p in enumerate([17, 27, 12, 27, 29, 7, 2])])
    assert s.cancel("t3") is True
    assert s.drain() == ["t6", "t5", "t2", "t0", "t1", "t4"]


def test_cancel_last_and_only_task():
    s = loaded([("only", 1)])
    assert s.cancel("only") is True
    assert len(s) == 0
    s = loaded([("a", 1), ("b", 2), ("c", 3)])
    assert s.cancel("c") is True
    assert s.drain() == ["a", "b"]


def test_cancel_keeps_fifo_ties():
    s = loaded([(n, 1) for n in "abcdef"])
    assert s.cancel("b") is True
    s.push("g", 1)
    assert s.drain() == ["a", "c", "d", "e", "f", "g"]


def test_push_onto_non_empty_compares_at_least_once():
    s = Scheduler()
    s.push("a", 1)
    first = s.comparisons
    s.push("b", 2)
    assert s.comparisons >= first + 1


def test_push_comparison_bound_for_each_push():
    s = Scheduler()
    for i, p in enumerate(PRIORITIES):
        before = s.comparisons
        s.push(f"n{i}", p)
        assert s.comparisons - before <= floor_log2(len(s)) + 1


def test_push_bound_with_decreasing_priorities():
    s = Scheduler()
    for i in range(300):
        before = s.comparisons
        s.push(f"n{i}", 1000 - i)
        assert s.comparisons - before <= floor_log2(len(s)) + 1
    assert s.peek() == "n299"


def test_pop_comparison_bound_for_each_pop():
    s = loaded([(f"n{i}", p) for i, p in enumerate(PRIORITIES)])
    while len(s):
        n = len(s)
        before = s.comparisons
        s.pop()
        assert s.comparisons - before <= 2 * floor_log2(n) + 1


def test_comparisons_never_decrease():
    s = Scheduler()
    seen = [s.comparisons]
    for i, p in enumerate(PRIORITIES[:50]):
        s.push(f"n{i}", p)
        seen.append(s.comparisons)
    while len(s) > 10:
        s.pop()
        seen.append(s.comparisons)
    s.cancel("n3")
    seen.append(s.comparisons)
    s.drain()
    seen.append(s.comparisons)
    assert seen == sorted(seen)
    assert seen[-1] > 0


def test_comparisons_never_decrease_on_small_pops():
    s = loaded([("a", 2), ("b", 1)])
    after_push = s.comparisons
    assert after_push >= 1
    s.pop()
    assert s.comparisons >= after_push
    s.pop()
    assert s.comparisons >= after_push


def test_total_comparisons_are_n_log_n():
    n = 512
    s = Scheduler()
    for i in range(n):
        s.push(f"n{i}", (i * 7919) % 1009)
    s.drain()
    assert s.comparisons <= 3 * n * math.log2(n) + n
