import pytest

from di_container import CircularDependency, Container, ResolutionError, UnknownService


def app_container():
    c = Container()
    c.register("settings", lambda: {"env": "prod"}, lifetime="singleton")
    c.register("clock", lambda: object())
    c.register("service", lambda s, k: (s, k), deps=["settings", "clock"])
    return c


def test_smoke_resolve_simple():
    c = Container()
    c.register("n", lambda: 3)
    assert c.resolve("n") == 3


def test_smoke_has():
    assert app_container().has("clock")


def test_smoke_child_sees_parent():
    assert app_container().child().resolve("settings") == {"env": "prod"}


def test_singleton_identity():
    c = app_container()
    assert c.resolve("settings") is c.resolve("settings")


def test_transient_identity_differs():
    c = app_container()
    assert c.resolve("clock") is not c.resolve("clock")


def test_child_shares_parent_singleton():
    c = app_container()
    assert c.child().resolve("settings") is c.resolve("settings")


def test_singleton_ignores_child_override():
    c = Container()
    c.register("env", lambda: "prod")
    c.register("banner", lambda e: f"[{e}]", lifetime="singleton", deps=["env"])
    kid = c.child()
    kid.register("env", lambda: "test")
    assert kid.resolve("banner") == "[prod]"


def test_transient_uses_child_override():
    c = Container()
    c.register("env", lambda: "prod")
    c.register("label", lambda e: f"<{e}>", deps=["env"])
    kid = c.child()
    kid.register("env", lambda: "test")
    assert kid.resolve("label") == "<test>"


def test_reregistered_singleton_is_rebuilt():
    c = app_container()
    c.resolve("settings")
    c.register("settings", lambda: {"env": "dev"}, lifetime="singleton")
    assert c.resolve("settings") == {"env": "dev"}


def test_cycle_path_starts_at_repeat():
    c = Container()
    c.register("root", lambda x: x, deps=["p"])
    c.register("p", lambda x: x, deps=["q"])
    c.register("q", lambda x: x, deps=["p"])
    with pytest.raises(CircularDependency) as info:
        c.resolve("root")
    assert info.value.path == ["p", "q", "p"]


def test_recovers_after_factory_error():
    c = Container()
    box = {"n": 0}

    def sometimes():
        box["n"] += 1
        if box["n"] == 1:
            raise ValueError("boom")
        return box["n"]

    c.register("thing", sometimes)
    c.register("user", lambda t: t, deps=["thing"])
    with pytest.raises(ValueError):
        c.resolve("user")
    assert c.resolve("user") == 2


def test_argument_order():
    c = Container()
    c.register("first", lambda: 1)
    c.register("second", lambda: 2)
    c.register("diff", lambda a, b: a - b, deps=["first", "second"])
    assert c.resolve("diff") == -1


def test_grandchild_sees_middle_override():
    c = Container()
    c.register("tier", lambda: "top")
    middle = c.child()
    middle.register("tier", lambda: "middle")
    assert middle.child().resolve("tier") == "middle"


def test_validate_finds_three_cycle():
    c = Container()
    c.register("x", lambda a: a, deps=["y"])
    c.register("y", lambda a: a, deps=["z"])
    c.register("z", lambda a: a, deps=["x"])
    with pytest.raises(CircularDependency):
        c.validate()


def test_unknown_service_message():
    with pytest.raises(UnknownService, match="no service registered for 'ghost'"):
        Container().resolve("ghost")


def test_cycle_message_uses_arrows():
    c = Container()
    c.register("a", lambda x: x, deps=["a"])
    with pytest.raises(CircularDependency, match="'a' -> 'a'"):
        c.resolve("a")


def test_unknown_service_is_key_error():
    with pytest.raises(KeyError):
        Container().resolve("nothing")


def test_validate_returns_true_when_fine():
    assert app_container().validate() is True


def test_resolution_error_base_catches_cycle():
    c = Container()
    c.register("a", lambda x: x, deps=["a"])
    with pytest.raises(ResolutionError):
        c.resolve("a")


def test_scenario_app_wiring():
    root = Container()
    root.register("env", lambda: "prod")
    root.register("cfg", lambda e: {"env": e}, lifetime="singleton", deps=["env"])
    root.register("conn", lambda c, e: (c["env"], e), deps=["cfg", "env"])
    tenant = root.child()
    tenant.register("env", lambda: "tenant")
    leaf = tenant.child()
    assert leaf.resolve("conn") == ("prod", "tenant")
    assert leaf.resolve("cfg") is root.resolve("cfg")
    root.register("cfg", lambda e: {"env": e + "!"}, lifetime="singleton", deps=["env"])
    assert root.resolve("cfg") == {"env": "prod!"}
    root.register("loop1", lambda x: x, deps=["loop2"])
    root.register("loop2", lambda x: x, deps=["loop3"])
    root.register("loop3", lambda x: x, deps=["loop2"])
    with pytest.raises(CircularDependency) as info:
        root.resolve("loop1")
    assert info.value.path == ["loop2", "loop3", "loop2"]
    with pytest.raises(CircularDependency):
        root.validate()
    state = {"n": 0}

    def flaky():
        state["n"] += 1
        if state["n"] == 1:
            raise OSError("first")
        return "up"

    root.register("net", flaky)
    root.register("api", lambda n: n, deps=["net"])
    with pytest.raises(OSError):
        root.resolve("api")
    assert root.resolve("api") == "up"
