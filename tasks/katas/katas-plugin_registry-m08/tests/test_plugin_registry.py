import dataclasses

import pytest

from plugin_registry import DuplicatePlugin, Plugin, PluginError, PluginNotFound, Registry


class Codec:
    def __init__(self, label, priority=None):
        self.label = label
        if priority is not None:
            self.priority = priority


def test_error_hierarchy():
    assert issubclass(DuplicatePlugin, PluginError)
    assert issubclass(PluginNotFound, PluginError)
    assert issubclass(PluginNotFound, LookupError)


def test_register_returns_frozen_plugin_with_normalized_version():
    reg = Registry()
    plugin = reg.register("zip", "3.1", "Z", priority=2)
    assert plugin == Plugin("zip", "3.1.0", "Z", 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plugin.priority = 9


@pytest.mark.parametrize("bad", ["", "1.", ".1", "1..2", "1.2.3.4", "v1", "1.-2", " 1", "1.2a", 12, None])
def test_malformed_versions(bad):
    reg = Registry()
    with pytest.raises(ValueError):
        reg.register("p", bad, object())
    assert reg.names() == []


@pytest.mark.parametrize("bad", ["", None, 5])
def test_bad_names(bad):
    with pytest.raises(ValueError):
        Registry().register(bad, "1", object())


def test_short_and_long_forms_are_the_same_version():
    reg = Registry()
    reg.register("p", "1.4", "a")
    with pytest.raises(DuplicatePlugin):
        reg.register("p", "1.4.0", "b")
    with pytest.raises(DuplicatePlugin):
        reg.register("p", "01.04", "c")
    assert reg.versions("p") == ["1.4.0"]
    assert reg.get_exact("p", "1.4.0") == "a"
    assert reg.get_exact("p", "1.4") == "a"


def test_newest_version_wins_numerically():
    reg = Registry()
    reg.register("json", "1.9", "old")
    reg.register("json", "1.10", "new")
    reg.register("json", "1.2.30", "older")
    assert reg.get("json") == "new"
    reg.register("json", "2", "two")
    assert reg.get("json") == "two"


def test_priority_beats_version():
    reg = Registry()
    reg.register("json", "3.0", "newest")
    reg.register("json", "0.1", "pinned", priority=5)
    reg.register("json", "9.0", "demoted", priority=-1)
    assert reg.get("json") == "pinned"
    assert [p.obj for p in reg.plugins("json")] == ["pinned", "newest", "demoted"]


def test_resolution_order_ties_broken_by_version():
    reg = Registry()
    reg.register("x", "1.0", "a", priority=1)
    reg.register("x", "2.0", "b")
    reg.register("x", "1.5", "c", priority=1)
    reg.register("x", "0.9", "d")
    assert [p.version for p in reg.plugins("x")] == ["1.5.0", "1.0.0", "2.0.0", "0.9.0"]
    assert [p.priority for p in reg.plugins("x")] == [1, 1, 0, 0]
    assert reg.plugins("nothing") == []


def test_duplicate_raises_and_keeps_original():
    reg = Registry()
    reg.register("csv", "2.0", "v1", priority=3)
    with pytest.raises(DuplicatePlugin):
        reg.register("csv", "2", "v2", priority=3)
    with pytest.raises(DuplicatePlugin):
        reg.register("csv", "2.0.0", "v3", priority=9)
    assert reg.get("csv") == "v1"
    assert reg.plugins("csv") == [Plugin("csv", "2.0.0", "v1", 3)]


def test_replace_true_swaps_plugin():
    reg = Registry()
    reg.register("csv", "2.0", "v1", priority=3)
    replaced = reg.register("csv", "2", "v2", priority=1, replace=True)
    assert replaced == Plugin("csv", "2.0.0", "v2", 1)
    assert reg.get("csv") == "v2"
    assert reg.plugins("csv") == [replaced]
    assert reg.register("csv", "3", "v3", replace=True).version == "3.0.0"


def test_get_with_major():
    reg = Registry()
    reg.register("xml", "1.4", "one-four")
    reg.register("xml", "1.12", "one-twelve")
    reg.register("xml", "2.0", "two")
    reg.register("xml", "0.5", "zero")
    assert reg.get("xml", major=1) == "one-twelve"
    assert reg.get("xml", major=2) == "two"
    assert reg.get("xml", major=0) == "zero"
    with pytest.raises(PluginNotFound):
        reg.get("xml", major=3)


def test_get_unknown():
    with pytest.raises(PluginNotFound):
        Registry().get("nope")
    reg = Registry()
    reg.register("a", "1", 1)
    with pytest.raises(PluginNotFound):
        reg.get_exact("a", "1.0.1")


def test_versions_sorted_numerically():
    reg = Registry()
    for version in ["2", "1.10", "1.9", "10.0.1", "1.9.5"]:
        reg.register("lib", version, version)
    assert reg.versions("lib") == ["1.9.0", "1.9.5", "1.10.0", "2.0.0", "10.0.1"]
    assert reg.versions("unknown") == []


def test_names_sorted_and_without_emptied_names():
    reg = Registry()
    reg.register("b", "1", 1)
    reg.register("a", "1", 1)
    reg.register("c", "1", 1)
    assert reg.names() == ["a", "b", "c"]
    reg.unregister("b")
    assert reg.names() == ["a", "c"]


def test_unregister_one_version():
    reg = Registry()
    reg.register("p", "1", "one")
    reg.register("p", "2", "two")
    assert reg.unregister("p", "2.0") == 1
    assert reg.get("p") == "one"
    with pytest.raises(PluginNotFound):
        reg.get_exact("p", "2")
    with pytest.raises(PluginNotFound):
        reg.unregister("p", "2")
    with pytest.raises(PluginNotFound):
        reg.unregister("p", "1.5")


def test_unregister_all_versions():
    reg = Registry()
    for v in ("1", "2", "3"):
        reg.register("p", v, v)
    assert reg.unregister("p") == 3
    assert reg.versions("p") == []
    with pytest.raises(PluginNotFound):
        reg.unregister("p")
    with pytest.raises(PluginNotFound):
        reg.unregister("never")


def test_discover_registers_in_mapping_order():
    reg = Registry()
    added = reg.discover({"yaml@2": Codec("y"), "toml": Codec("t"), "ini@0.3.1": Codec("i")})
    assert added == ["yaml@2.0.0", "toml@0.0.0", "ini@0.3.1"]
    assert reg.versions("toml") == ["0.0.0"]
    assert reg.get("yaml").label == "y"


def test_discover_splits_at_last_at_sign():
    reg = Registry()
    assert reg.discover({"Acme@Tools@1.2": "x"}) == ["Acme@Tools@1.2.0"]
    assert reg.names() == ["Acme@Tools"]


def test_discover_uses_priority_attribute():
    reg = Registry()
    reg.register("fmt", "5.0", "registered")
    reg.discover({"fmt@1.0": Codec("boosted", priority=7), "fmt@6.0": Codec("plain")})
    assert reg.get("fmt").label == "boosted"
    assert [p.priority for p in reg.plugins("fmt")] == [7, 0, 0]


def test_discover_skips_known_and_repeated_versions():
    reg = Registry()
    reg.register("json", "1.9", "old")
    added = reg.discover({"yaml@1": "y1", "json@1.9.0": "other", "yaml@1.0": "y-again",
                          "json@2": "j2"})
    assert added == ["yaml@1.0.0", "json@2.0.0"]
    assert reg.get_exact("json", "1.9") == "old"
    assert reg.get_exact("yaml", "1") == "y1"


@pytest.mark.parametrize("bad_key", ["bad@x.y", "@1.0", "", "nover@"])
def test_discover_is_all_or_nothing(bad_key):
    reg = Registry()
    reg.register("keep", "1", "k")
    with pytest.raises(ValueError):
        reg.discover({"good@1.0": "g", "plain": "p", bad_key: "b"})
    assert reg.names() == ["keep"]


def test_discover_rejects_non_int_priority():
    reg = Registry()
    with pytest.raises(ValueError):
        reg.discover({"a": "ok", "b@1": Codec("b", priority="high")})
    with pytest.raises(ValueError):
        reg.discover({"c@1": Codec("c", priority=True)})
    assert reg.names() == []
