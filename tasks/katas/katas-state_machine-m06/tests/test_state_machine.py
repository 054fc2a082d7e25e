import pytest

from state_machine import GuardRejected, InvalidTransition, Machine, UnknownState


def order_machine():
    m = Machine(["new", "paid", "shipped", "delivered", "cancelled"], "new",
                final=["delivered", "cancelled"])
    m.add_transition("pay", "new", "paid")
    m.add_transition("ship", "paid", "shipped", guard=lambda ctx: ctx.get("stock", 0) > 0)
    m.add_transition("deliver", "shipped", "delivered")
    m.add_transition("cancel", "*", "cancelled")
    return m


def test_error_hierarchy():
    assert issubclass(UnknownState, ValueError)
    assert issubclass(GuardRejected, InvalidTransition)


def test_initial_state_and_fire_returns_new_state():
    m = order_machine()
    assert m.state == "new"
    assert m.fire("pay") == "paid"
    assert m.state == "paid"
    assert m.is_final is False


@pytest.mark.parametrize("states", [[], ["a", "b", "a"]])
def test_bad_state_lists(states):
    with pytest.raises(ValueError):
        Machine(states, "a")


def test_unknown_initial_or_final():
    with pytest.raises(UnknownState):
        Machine(["a", "b"], "c")
    with pytest.raises(UnknownState):
        Machine(["a", "b"], "a", final=["z"])


def test_unknown_source_or_target():
    m = Machine(["a", "b"], "a")
    with pytest.raises(UnknownState):
        m.add_transition("go", "a", "nowhere")
    with pytest.raises(UnknownState):
        m.add_transition("go", "nowhere", "b")
    with pytest.raises(UnknownState):
        m.add_transition("go", "*", "*")
    assert m.available_events() == []
    with pytest.raises(InvalidTransition):
        m.fire("go")


def test_transition_out_of_final_state_rejected():
    m = Machine(["a", "z"], "a", final=["z"])
    with pytest.raises(ValueError):
        m.add_transition("again", "z", "a")


def test_duplicate_pair_rejected_and_first_kept():
    m = order_machine()
    with pytest.raises(ValueError):
        m.add_transition("pay", "new", "cancelled")
    assert m.fire("pay") == "paid"


def test_duplicate_inside_list_or_partial_overlap_adds_nothing():
    m = Machine(["a", "b", "c"], "a")
    with pytest.raises(ValueError):
        m.add_transition("go", ["a", "a"], "b")
    m.add_transition("go", "b", "c")
    with pytest.raises(ValueError):
        m.add_transition("go", ["a", "b"], "a")
    assert m.available_events() == []
    assert m.can_fire("go") is False


def test_wildcard_may_coexist_with_exact_pair():
    m = Machine(["a", "b", "c"], "a")
    m.add_transition("x", "*", "c")
    m.add_transition("x", "a", "b")
    with pytest.raises(ValueError):
        m.add_transition("x", "*", "a")
    assert m.fire("x") == "b"
    assert m.fire("x") == "c"


def test_list_source():
    m = Machine(["a", "b", "c"], "a")
    m.add_transition("hop", ("a", "b"), "c")
    assert m.fire("hop") == "c"
    m2 = Machine(["a", "b", "c"], "b")
    m2.add_transition("hop", ["a", "b"], "c")
    assert m2.fire("hop") == "c"


def test_exact_transition_beats_wildcard_in_either_order():
    m = order_machine()
    m.add_transition("cancel", "paid", "new")
    m.fire("pay")
    assert m.fire("cancel") == "new"
    assert m.fire("cancel") == "cancelled"


def test_wildcard_fires_from_any_non_final_state():
    m = order_machine()
    m.fire("pay")
    m.fire("ship", stock=3)
    assert m.fire("cancel") == "cancelled"
    assert m.is_final is True


def test_final_state_blocks_wildcards():
    m = order_machine()
    m.fire("cancel")
    assert m.can_fire("cancel") is False
    assert m.available_events() == []
    with pytest.raises(InvalidTransition) as info:
        m.fire("cancel")
    assert not isinstance(info.value, GuardRejected)
    assert info.value.state == "cancelled"


def test_invalid_event_raises_with_attributes():
    m = order_machine()
    with pytest.raises(InvalidTransition) as info:
        m.fire("deliver")
    assert info.value.event == "deliver"
    assert info.value.state == "new"
    assert not isinstance(info.value, GuardRejected)
    assert m.history == []


def test_guard_rejection_changes_nothing():
    m = order_machine()
    m.fire("pay")
    with pytest.raises(GuardRejected) as info:
        m.fire("ship", stock=0)
    assert info.value.state == "paid"
    assert info.value.event == "ship"
    assert m.state == "paid"
    assert m.history == [("new", "pay", "paid")]


@pytest.mark.parametrize("result", [None, 0, "", [], False])
def test_any_falsy_guard_result_rejects(result):
    m = Machine(["a", "b"], "a")
    m.add_transition("go", "a", "b", guard=lambda ctx: result)
    with pytest.raises(GuardRejected):
        m.fire("go")
    assert m.can_fire("go") is False
    assert m.state == "a"


def test_guard_receives_context_dict():
    seen = []
    m = Machine(["a", "b"], "a")
    m.add_transition("go", "a", "b", guard=lambda ctx: seen.append(ctx) or True)
    m.fire("go", user="ann", n=2)
    assert seen == [{"user": "ann", "n": 2}]


def test_can_fire_evaluates_guards_and_changes_nothing():
    m = order_machine()
    m.fire("pay")
    assert m.can_fire("ship", stock=0) is False
    assert m.can_fire("ship", stock=5) is True
    assert m.can_fire("cancel") is True
    assert m.can_fire("pay") is False
    assert m.can_fire("no-such-event") is False
    assert m.state == "paid"
    assert len(m.history) == 1


def test_can_fire_accepts_truthy_non_bool_guard():
    m = Machine(["a", "b"], "a")
    m.add_transition("go", "a", "b", guard=lambda ctx: ctx.get("n"))
    assert m.can_fire("go", n=7) is True
    assert m.fire("go", n=7) == "b"


def test_available_events_sorted_with_wildcards_only_from_here():
    m = order_machine()
    m.add_transition("audit", "*", "new")
    assert m.available_events() == ["audit", "cancel", "pay"]
    m.fire("pay")
    assert m.available_events() == ["audit", "cancel", "ship"]


def test_history_records_source_event_target_and_is_a_copy():
    m = order_machine()
    m.fire("pay")
    m.fire("ship", stock=1)
    assert m.history == [("new", "pay", "paid"), ("paid", "ship", "shipped")]
    m.history.clear()
    assert len(m.history) == 2


def test_self_loop_is_recorded():
    m = Machine(["a"], "a")
    m.add_transition("tick", "a", "a")
    assert m.fire("tick") == "a"
    assert m.fire("tick") == "a"
    assert m.history == [("a", "tick", "a"), ("a", "tick", "a")]


def test_undo_reverts_newest_first():
    m = order_machine()
    m.fire("pay")
    m.fire("ship", stock=1)
    assert m.undo() == "paid"
    assert m.state == "paid"
    assert m.history == [("new", "pay", "paid")]
    assert m.undo() == "new"
    assert m.history == []
    with pytest.raises(IndexError):
        m.undo()


def test_undo_out_of_final_state():
    m = order_machine()
    m.fire("cancel")
    assert m.undo() == "new"
    assert m.is_final is False
    assert m.fire("pay") == "paid"


def test_reset_returns_to_initial_and_clears_history():
    m = order_machine()
    m.reset()
    assert m.history == []
    m.fire("pay")
    m.fire("ship", stock=2)
    m.reset()
    assert m.state == "new"
    assert m.history == []
    with pytest.raises(IndexError):
        m.undo()
