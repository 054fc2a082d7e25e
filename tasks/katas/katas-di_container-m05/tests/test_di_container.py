import pytest

from di_container import CircularDependency, Container, ResolutionError, UnknownService


class Counter:
    def __init__(self, value):
        self.value = value
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return (self.value, self.calls) + args


def test_error_hierarchy():
    assert issubclass(UnknownService, ResolutionError)
    assert issubclass(UnknownService, LookupError)
    assert issubclass(CircularDependency, ResolutionError)


def test_transient_new_each_time():
    c = Container()
    factory = Counter("t")
    c.register("t", factory)
    assert c.resolve("t") == ("t", 1)
    assert c.resolve("t") == ("t", 2)


def test_singleton_created_once_even_without_deps():
    c = Container()
    factory = Counter("s")
    c.register("s", factory, lifetime="singleton")
    first = c.resolve("s")
    assert c.resolve("s") is first
    assert factory.calls == 1


def test_singleton_with_deps_cached_and_transient_dep_used_once():
    c = Container()
    dep = Counter("d")
    c.register("d", dep)
    c.register("s", lambda d: ["s", d], lifetime="singleton", deps=["d"])
    assert c.resolve("s") is c.resolve("s")
    assert dep.calls == 1


@pytest.mark.parametrize("bad", ["scoped", "Singleton", None, ""])
def test_bad_lifetime(bad):
    c = Container()
    with pytest.raises(ValueError):
        c.register("k", lambda: 1, lifetime=bad)
    assert not c.has("k")


def test_deps_passed_in_order():
    c = Container()
    c.register("x", lambda: "X")
    c.register("y", lambda: "Y")
    c.register("z", lambda: "Z")
    c.register("trio", lambda *parts: "".join(parts), deps=["y", "z", "x"])
    assert c.resolve("trio") == "YZX"


def test_register_instance_returns_same_object():
    c = Container()
    obj = object()
    c.register_instance("obj", obj)
    c.register("user", lambda o: ("user", o), deps=["obj"])
    assert c.resolve("obj") is obj
    assert c.resolve("user")[1] is obj


def test_non_string_keys():
    c = Container()
    c.register(int, lambda: 5)
    c.register(("tuple", 1), lambda n: n * 2, deps=[int])
    assert c.resolve(("tuple", 1)) == 10


def test_unknown_key_and_unknown_dependency():
    c = Container()
    with pytest.raises(UnknownService) as info:
        c.resolve("ghost")
    assert info.value.key == "ghost"
    c.register("svc", lambda d: d, deps=["missing"])
    with pytest.raises(UnknownService) as info:
        c.resolve("svc")
    assert info.value.key == "missing"


def test_reregister_replaces_and_forgets_singleton():
    c = Container()
    c.register("other", Counter("o"), lifetime="singleton")
    other = c.resolve("other")
    c.register("v", lambda: "old", lifetime="singleton")
    assert c.resolve("v") == "old"
    c.register("v", lambda: "new", lifetime="singleton")
    assert c.resolve("v") == "new"
    c.register("v", Counter("t"))
    assert c.resolve("v") == ("t", 1)
    assert c.resolve("other") is other


def test_reregister_instance_key_with_factory():
    c = Container()
    c.register_instance("cfg", {"a": 1})
    c.register("cfg", lambda: {"b": 2}, lifetime="singleton")
    assert c.resolve("cfg") == {"b": 2}


def test_has_looks_at_ancestors():
    root = Container()
    root.register("a", lambda: 1)
    leaf = root.child().child()
    assert leaf.has("a") is True
    assert leaf.has("b") is False
    assert root.has("a") is True


def test_nearest_registration_wins():
    root = Container()
    root.register("db", lambda: "root-db")
    root.register("log", lambda: "root-log")
    mid = root.child()
    mid.register("db", lambda: "mid-db")
    leaf = mid.child()
    assert leaf.resolve("db") == "mid-db"
    assert leaf.resolve("log") == "root-log"
    assert root.resolve("db") == "root-db"
    leaf.register("db", lambda: "leaf-db")
    assert leaf.resolve("db") == "leaf-db"
    assert mid.resolve("db") == "mid-db"


def test_parent_singleton_shared_with_children():
    root = Container()
    factory = Counter("cfg")
    root.register("cfg", factory, lifetime="singleton")
    first_child, second_child = root.child(), root.child()
    instance = first_child.resolve("cfg")
    assert second_child.resolve("cfg") is instance
    assert root.resolve("cfg") is instance
    assert first_child.child().resolve("cfg") is instance
    assert factory.calls == 1


def test_child_singleton_not_visible_to_parent():
    root = Container()
    child = root.child()
    child.register("only", lambda: "child-only", lifetime="singleton")
    assert child.resolve("only") == "child-only"
    with pytest.raises(UnknownService):
        root.resolve("only")


def test_transient_deps_resolved_through_requesting_child():
    root = Container()
    root.register("name", lambda: "parent")
    root.register("greeting", lambda n: "hi " + n, deps=["name"])
    child = root.child()
    child.register("name", lambda: "child")
    assert child.resolve("greeting") == "hi child"
    assert root.resolve("greeting") == "hi parent"
    assert child.child().resolve("greeting") == "hi child"


def test_singleton_deps_resolved_through_owner():
    root = Container()
    root.register("name", lambda: "parent")
    root.register("greeter", lambda n: "hi " + n, lifetime="singleton", deps=["name"])
    mid = root.child()
    mid.register("name", lambda: "mid")
    leaf = mid.child()
    assert leaf.resolve("greeter") == "hi parent"
    assert mid.resolve("greeter") == "hi parent"


def test_cycle_path_and_no_factory_called():
    c = Container()
    called = []
    c.register("app", lambda a: called.append("app"), deps=["a"])
    c.register("a", lambda b: called.append("a"), deps=["b"])
    c.register("b", lambda cc: called.append("b"), deps=["c"])
    c.register("c", lambda a: called.append("c"), deps=["a"])
    with pytest.raises(CircularDependency) as info:
        c.resolve("app")
    assert info.value.path == ["a", "b", "c", "a"]
    assert called == []


def test_self_dependency_and_singleton_cycle():
    c = Container()
    c.register("me", lambda m: m, deps=["me"])
    with pytest.raises(CircularDependency) as info:
        c.resolve("me")
    assert info.value.path == ["me", "me"]
    c.register("s1", lambda x: x, lifetime="singleton", deps=["s2"])
    c.register("s2", lambda x: x, lifetime="singleton", deps=["s1"])
    with pytest.raises(CircularDependency) as info:
        c.resolve("s1")
    assert info.value.path == ["s1", "s2", "s1"]
    with pytest.raises(CircularDependency):
        c.resolve("s1")


def test_diamond_is_not_a_cycle():
    c = Container()
    c.register("base", lambda: "b")
    c.register("left", lambda b: "L" + b, deps=["base"])
    c.register("right", lambda b: "R" + b, deps=["base"])
    c.register("top", lambda l, r: l + r, deps=["left", "right"])
    assert c.resolve("top") == "LbRb"
    assert c.validate() is None


def test_failing_dependency_leaves_no_state():
    state = {"fail": True}

    def flaky():
        if state["fail"]:
            raise OSError("disk")
        return "ok"

    c = Container()
    c.register("store", flaky)
    c.register("svc", lambda s: ("svc", s), deps=["store"])
    with pytest.raises(OSError):
        c.resolve("svc")
    state["fail"] = False
    assert c.resolve("svc") == ("svc", "ok")


def test_failing_factory_leaves_no_state_and_singleton_retried():
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("first time")
        return "ready"

    c = Container()
    c.register("conn", flaky, lifetime="singleton")
    with pytest.raises(RuntimeError):
        c.resolve("conn")
    assert c.resolve("conn") == "ready"
    assert c.resolve("conn") == "ready"
    assert len(attempts) == 2


def test_unknown_dependency_leaves_no_state():
    c = Container()
    c.register("svc", lambda d: d, deps=["late"])
    with pytest.raises(UnknownService):
        c.resolve("svc")
    c.register("late", lambda: 7)
    assert c.resolve("svc") == 7


def test_validate_ok_and_calls_nothing():
    c = Container()
    called = []
    c.register("a", lambda b: called.append("a"), deps=["b"])
    c.register("b", lambda: called.append("b"), lifetime="singleton")
    assert c.validate() is None
    assert called == []


def test_validate_unknown_dependency():
    c = Container()
    c.register("a", lambda x: x, deps=["nowhere"])
    with pytest.raises(UnknownService) as info:
        c.validate()
    assert info.value.key == "nowhere"


def test_validate_long_cycle():
    c = Container()
    c.register("a", lambda x: x, deps=["b"])
    c.register("b", lambda x: x, deps=["c"])
    c.register("c", lambda x: x, deps=["d"])
    c.register("d", lambda x: x, deps=["a"])
    with pytest.raises(CircularDependency) as info:
        c.validate()
    path = info.value.path
    assert path[0] == path[-1]
    assert sorted(path[:-1]) == ["a", "b", "c", "d"]


def test_validate_sees_parent_registrations():
    root = Container()
    root.register("base", lambda: 1)
    child = root.child()
    child.register("svc", lambda b: b, deps=["base"])
    assert child.validate() is None
    assert root.child().validate() is None
    lonely = Container()
    lonely.register("x", lambda y: y, deps=["y"])
    with pytest.raises(UnknownService):
        lonely.validate()
