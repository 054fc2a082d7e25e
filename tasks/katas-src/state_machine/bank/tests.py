import pytest

from state_machine import GuardRejected, InvalidTransition, Machine, UnknownState


def door():
    m = Machine(["closed", "open", "locked", "broken"], "closed", final=["broken"])
    m.add_transition("open", "closed", "open")
    m.add_transition("close", "open", "closed")
    m.add_transition("lock", "closed", "locked", guard=lambda c: c.get("key") == "k1")
    m.add_transition("unlock", "locked", "closed", guard=lambda c: c.get("key") == "k1")
    m.add_transition("smash", "*", "broken")
    return m


def test_smoke_starts_closed():
    assert door().state == "closed"


def test_smoke_open_close():
    m = door()
    m.fire("open")
    assert m.fire("close") == "closed"


def test_smoke_is_final_after_smash():
    m = door()
    m.fire("smash")
    assert m.is_final


def test_exact_beats_wildcard():
    m = door()
    m.add_transition("smash", "open", "closed")
    m.fire("open")
    assert m.fire("smash") == "closed"


def test_failed_guard_keeps_door_closed():
    m = door()
    with pytest.raises(GuardRejected):
        m.fire("lock", key="wrong")
    assert m.state == "closed"


def test_guard_returning_none_rejects():
    m = Machine(["s", "t"], "s")
    m.add_transition("go", "s", "t", guard=lambda c: None)
    with pytest.raises(GuardRejected):
        m.fire("go")


def test_history_tuple_layout():
    m = door()
    m.fire("lock", key="k1")
    assert m.history == [("closed", "lock", "locked")]


def test_reset_forgets_history():
    m = door()
    m.fire("open")
    m.reset()
    assert m.history == []


def test_undo_goes_back_one_step():
    m = door()
    m.fire("open")
    m.fire("close")
    m.fire("lock", key="k1")
    assert m.undo() == "closed"
    assert m.history[-1] == ("open", "close", "closed")


def test_broken_door_ignores_smash():
    m = door()
    m.fire("smash")
    with pytest.raises(InvalidTransition):
        m.fire("smash")


def test_redefining_open_is_refused():
    m = door()
    with pytest.raises(ValueError):
        m.add_transition("open", "closed", "locked")


def test_unknown_target_refused():
    m = door()
    with pytest.raises(UnknownState):
        m.add_transition("melt", "open", "puddle")


def test_events_include_wildcard():
    m = door()
    assert m.available_events() == ["lock", "open", "smash"]


def test_can_fire_checks_the_key():
    m = door()
    assert not m.can_fire("lock", key="nope")
    assert m.can_fire("lock", key="k1")


def test_guard_failure_type():
    m = door()
    with pytest.raises(GuardRejected):
        m.fire("unlock" if m.state == "locked" else "lock")


def test_error_message_text():
    m = door()
    with pytest.raises(InvalidTransition, match="cannot fire 'close' in state 'closed'"):
        m.fire("close")


def test_wildcard_inside_list_source_allowed():
    m = Machine(["a", "b"], "a")
    m.add_transition("go", ["a", "*"], "b")
    assert m.fire("go") == "b"


def test_unknown_state_error_is_key_error():
    with pytest.raises(KeyError):
        Machine(["a"], "b")


def test_undo_on_fresh_machine_returns_initial():
    assert door().undo() == "closed"


def test_history_is_tuple_of_tuples():
    m = door()
    m.fire("open")
    assert isinstance(m.history, list)


def test_scenario_ticket_lifecycle():
    m = Machine(["open", "working", "blocked", "closed"], "open", final=["closed"])
    m.add_transition("start", "open", "working")
    m.add_transition("block", "working", "blocked", guard=lambda c: c.get("reason"))
    m.add_transition("unblock", "blocked", "working")
    m.add_transition("close", "*", "closed")
    m.add_transition("close", "blocked", "open")
    with pytest.raises(ValueError):
        m.add_transition("start", "open", "blocked")
    with pytest.raises(UnknownState):
        m.add_transition("archive", "open", "archived")
    assert m.available_events() == ["close", "start"]
    m.fire("start")
    assert m.can_fire("block") is False
    with pytest.raises(GuardRejected):
        m.fire("block", reason="")
    assert m.state == "working"
    m.fire("block", reason="waiting")
    assert m.fire("close") == "open"
    assert m.undo() == "blocked"
    m.fire("unblock")
    m.fire("close")
    assert m.is_final and m.available_events() == []
    with pytest.raises(InvalidTransition):
        m.fire("close")
    assert m.history == [("open", "start", "working"), ("working", "block", "blocked"),
                         ("blocked", "unblock", "working"), ("working", "close", "closed")]
    m.reset()
    assert (m.state, m.history) == ("open", [])
