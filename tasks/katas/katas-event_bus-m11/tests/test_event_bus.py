import pytest

from event_bus import EventBus, PublishError


@pytest.fixture
def bus():
    return EventBus()


def recorder(log, label):
    def handler(topic, payload):
        log.append((label, topic, payload))
    return handler


def labels(log):
    return [entry[0] for entry in log]


def test_exact_topic_delivery_and_count(bus):
    log = []
    bus.subscribe("user.created", recorder(log, "a"))
    assert bus.publish("user.created", {"id": 1}) == 1
    assert log == [("a", "user.created", {"id": 1})]
    assert bus.publish("user.deleted") == 0
    assert bus.publish("user") == 0


def test_default_payload_is_none(bus):
    log = []
    bus.subscribe("t", recorder(log, "a"))
    bus.publish("t")
    assert log == [("a", "t", None)]


@pytest.mark.parametrize("topic,expected", [
    ("order.created", True), ("order", False), ("order.item.added", False),
    ("other.created", False), ("order.x", True)])
def test_star_matches_exactly_one_segment(bus, topic, expected):
    log = []
    bus.subscribe("order.*", recorder(log, "s"))
    assert bus.publish(topic) == int(expected)


@pytest.mark.parametrize("topic,expected", [
    ("order", True), ("order.created", True), ("order.item.added", True),
    ("orders", False), ("other.order", False)])
def test_hash_matches_zero_or_more(bus, topic, expected):
    bus.subscribe("order.#", lambda t, p: None)
    assert bus.publish(topic) == int(expected)


def test_lone_hash_and_mixed_wildcards(bus):
    everything = bus.subscribe("#", lambda t, p: None)
    middle = bus.subscribe("*.b.#", lambda t, p: None)
    assert bus.subscribers("x") == [everything]
    assert bus.subscribers("a.b") == [everything, middle]
    assert bus.subscribers("a.b.c.d") == [everything, middle]
    assert bus.subscribers("b") == [everything]


def test_pattern_longer_than_topic(bus):
    bus.subscribe("a.b.c", lambda t, p: None)
    bus.subscribe("a.*.c", lambda t, p: None)
    assert bus.publish("a.b") == 0
    assert bus.publish("a.b.c") == 2
    assert bus.publish("a.b.c.d") == 0


def test_case_sensitive_segments(bus):
    bus.subscribe("Order.created", lambda t, p: None)
    assert bus.publish("order.created") == 0


@pytest.mark.parametrize("pattern", ["", "a..b", ".a", "a.", "a.#.b", "#.a", "a.cr*", "a.*x",
                                     "a.b#", "a#b", "**"])
def test_malformed_patterns(bus, pattern):
    with pytest.raises(ValueError):
        bus.subscribe(pattern, lambda t, p: None)


@pytest.mark.parametrize("topic", ["", "a..b", "a.*", "#", "a.#", "x*"])
def test_malformed_topics(bus, topic):
    bus.subscribe("#", lambda t, p: None)
    with pytest.raises(ValueError):
        bus.publish(topic)
    with pytest.raises(ValueError):
        bus.subscribers(topic)


def test_tokens_unique_ints_never_reused(bus):
    first = bus.subscribe("a", lambda t, p: None)
    second = bus.subscribe("a", lambda t, p: None)
    bus.unsubscribe(first)
    third = bus.subscribe("a", lambda t, p: None)
    assert all(isinstance(t, int) for t in (first, second, third))
    assert len({first, second, third}) == 3


def test_priority_order_then_subscription_order(bus):
    log = []
    bus.subscribe("job", recorder(log, "low"), priority=-2)
    bus.subscribe("job", recorder(log, "mid1"))
    bus.subscribe("job", recorder(log, "high"), priority=5)
    bus.subscribe("job", recorder(log, "mid2"))
    bus.subscribe("job.#", recorder(log, "lower"), priority=-1)
    assert bus.publish("job") == 5
    assert labels(log) == ["high", "mid1", "mid2", "lower", "low"]


def test_many_equal_priority_keep_subscription_order(bus):
    log = []
    for i in range(12):
        bus.subscribe("tick", recorder(log, i))
    bus.publish("tick")
    assert labels(log) == list(range(12))


def test_subscribers_lists_tokens_in_call_order(bus):
    a = bus.subscribe("x.*", lambda t, p: None)
    b = bus.subscribe("x.y", lambda t, p: None, priority=3)
    bus.subscribe("z", lambda t, p: None)
    assert bus.subscribers("x.y") == [b, a]
    assert bus.subscribers("q") == []


def test_unsubscribe(bus):
    log = []
    token = bus.subscribe("a", recorder(log, "a"))
    assert bus.unsubscribe(token) is True
    assert bus.unsubscribe(token) is False
    assert bus.unsubscribe(12345) is False
    assert bus.publish("a") == 0
    assert log == []


def test_once_fires_only_once(bus):
    log = []
    token = bus.subscribe("a", recorder(log, "once"), once=True)
    bus.subscribe("a", recorder(log, "always"))
    assert bus.publish("a") == 2
    assert bus.publish("a") == 1
    assert labels(log) == ["once", "always", "always"]
    assert bus.unsubscribe(token) is False


def test_once_removed_before_handler_runs(bus):
    payloads = []

    def handler(topic, payload):
        payloads.append(payload)
        if len(payloads) == 1:
            assert bus.publish("ping", "inner") == 0

    bus.subscribe("ping", handler, once=True)
    assert bus.publish("ping", "outer") == 1
    assert payloads == ["outer"]


def test_failing_once_handler_is_still_removed(bus):
    def boom(topic, payload):
        raise RuntimeError("x")

    bus.subscribe("a", boom, once=True)
    with pytest.raises(PublishError):
        bus.publish("a")
    assert bus.publish("a") == 0


def test_unsubscribed_during_dispatch_is_skipped_and_not_counted(bus):
    log = []
    tokens = {}

    def first(topic, payload):
        log.append("first")
        bus.unsubscribe(tokens["third"])

    bus.subscribe("x", first)
    bus.subscribe("x", recorder(log, "second"))
    tokens["third"] = bus.subscribe("x", recorder(log, "third"))
    bus.subscribe("other", recorder(log, "other"))
    assert bus.publish("x") == 2
    assert log == ["first", ("second", "x", None)]


def test_subscribed_during_dispatch_waits_for_next_publish(bus):
    log = []

    def adder(topic, payload):
        log.append("adder")
        bus.subscribe("x", recorder(log, "late"))

    bus.subscribe("x", adder, once=True)
    assert bus.publish("x") == 1
    assert log == ["adder"]
    assert bus.publish("x") == 1
    assert labels(log[1:]) == ["late"]


def test_errors_are_isolated_and_collected_in_call_order(bus):
    log = []
    first_error = KeyError("k")
    second_error = ValueError("v")

    def fail_first(topic, payload):
        raise first_error

    def fail_second(topic, payload):
        raise second_error

    bad1 = bus.subscribe("e", fail_first, priority=2)
    bus.subscribe("e", recorder(log, "ok"), priority=1)
    bad2 = bus.subscribe("e", fail_second)
    bus.subscribe("e", recorder(log, "last"), priority=-1)
    with pytest.raises(PublishError) as info:
        bus.publish("e")
    assert info.value.errors == [(bad1, first_error), (bad2, second_error)]
    assert labels(log) == ["ok", "last"]
    assert isinstance(info.value, Exception)
