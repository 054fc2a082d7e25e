import pytest

from event_bus import EventBus, PublishError


def collecting_bus():
    bus = EventBus()
    got = []
    return bus, got


def test_smoke_publish_without_subscribers():
    assert EventBus().publish("nobody.listens") == 0


def test_smoke_subscribe_returns_int():
    assert isinstance(EventBus().subscribe("a.b", lambda t, p: None), int)


def test_smoke_handler_gets_payload():
    bus, got = collecting_bus()
    bus.subscribe("greet", lambda t, p: got.append(p))
    bus.publish("greet", "hi")
    assert got == ["hi"]


def test_star_does_not_span_two_segments():
    bus, got = collecting_bus()
    bus.subscribe("log.*", lambda t, p: got.append(t))
    bus.publish("log.app.error")
    assert got == []


def test_hash_matches_the_bare_prefix():
    bus, got = collecting_bus()
    bus.subscribe("log.#", lambda t, p: got.append(t))
    bus.publish("log")
    assert got == ["log"]


def test_high_priority_runs_first():
    bus, got = collecting_bus()
    bus.subscribe("evt", lambda t, p: got.append("normal"))
    bus.subscribe("evt", lambda t, p: got.append("urgent"), priority=9)
    bus.publish("evt")
    assert got == ["urgent", "normal"]


def test_ties_in_subscription_order():
    bus, got = collecting_bus()
    for name in "abc":
        bus.subscribe("evt", lambda t, p, name=name: got.append(name))
    bus.publish("evt")
    assert got == ["a", "b", "c"]


def test_once_handler_not_reentered():
    bus, got = collecting_bus()

    def handler(topic, payload):
        got.append(payload)
        if payload == 1:
            bus.publish("evt", 2)

    bus.subscribe("evt", handler, once=True)
    bus.publish("evt", 1)
    assert got == [1]


def test_removed_mid_dispatch_not_called():
    bus, got = collecting_bus()
    later = {}
    bus.subscribe("evt", lambda t, p: bus.unsubscribe(later["tok"]))
    later["tok"] = bus.subscribe("evt", lambda t, p: got.append("late"))
    bus.publish("evt")
    assert got == []


def test_one_failure_does_not_block_others():
    bus, got = collecting_bus()
    bus.subscribe("evt", lambda t, p: 1 / 0)
    bus.subscribe("evt", lambda t, p: got.append("ran"))
    with pytest.raises(PublishError):
        bus.publish("evt")
    assert got == ["ran"]


def test_count_excludes_skipped():
    bus, _ = collecting_bus()
    later = {}
    bus.subscribe("evt", lambda t, p: bus.unsubscribe(later["tok"]))
    later["tok"] = bus.subscribe("evt", lambda t, p: None)
    assert bus.publish("evt") == 1


def test_unsubscribe_unknown_is_false():
    assert EventBus().unsubscribe(42) is False


def test_partial_wildcard_segment_rejected():
    with pytest.raises(ValueError):
        EventBus().subscribe("metrics.cpu*", lambda t, p: None)


def test_first_token_is_one():
    assert EventBus().subscribe("a", lambda t, p: None) == 1


def test_publish_error_message_counts_failures():
    bus = EventBus()
    bus.subscribe("evt", lambda t, p: 1 / 0)
    with pytest.raises(PublishError, match="1 handler"):
        bus.publish("evt")


def test_publish_error_errors_is_tuple():
    bus = EventBus()
    bus.subscribe("evt", lambda t, p: 1 / 0)
    with pytest.raises(PublishError) as info:
        bus.publish("evt")
    assert isinstance(info.value.errors, tuple)


def test_wildcard_topic_publish_allowed():
    bus = EventBus()
    bus.subscribe("a.*", lambda t, p: None)
    assert bus.publish("a.*") == 1


def test_subscribers_for_unmatched_topic():
    assert EventBus().subscribers("x.y") == []


def test_scenario_notification_hub():
    bus = EventBus()
    got = []
    tokens = {}
    bus.subscribe("user.*", lambda t, p: got.append(("star", t)))
    bus.subscribe("user.#", lambda t, p: got.append(("hash", t)), priority=2)
    bus.subscribe("user.#", lambda t, p: got.append(("hash2", t)), priority=2)
    bus.subscribe("user", lambda t, p: bus.unsubscribe(tokens["late"]), priority=5)
    tokens["late"] = bus.subscribe("user", lambda t, p: got.append(("late", t)))
    bus.subscribe("user.login", lambda t, p: got.append(("once", t)), once=True)
    assert bus.publish("user") == 3
    assert bus.publish("user.login") == 4
    assert bus.publish("user.login") == 3
    assert bus.publish("user.login.failed") == 2
    assert got == [("hash", "user"), ("hash2", "user"),
                   ("hash", "user.login"), ("hash2", "user.login"), ("star", "user.login"),
                   ("once", "user.login"),
                   ("hash", "user.login"), ("hash2", "user.login"), ("star", "user.login"),
                   ("hash", "user.login.failed"), ("hash2", "user.login.failed")]
    assert bus.unsubscribe(tokens["late"]) is False
    with pytest.raises(ValueError):
        bus.subscribe("user.log*", lambda t, p: None)
    bus.subscribe("err", lambda t, p: 1 / 0)
    bus.subscribe("err", lambda t, p: got.append("after-error"))
    with pytest.raises(PublishError):
        bus.publish("err")
    assert got[-1] == "after-error"
