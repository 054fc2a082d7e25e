import pytest

from plugin_registry import DuplicatePlugin, Plugin, PluginError, PluginNotFound, Registry


class Loader:
    def __init__(self, tag, priority=None):
        self.tag = tag
        if priority is not None:
            self.priority = priority


def loaded():
    reg = Registry()
    reg.register("png", "2.3", "png23")
    reg.register("png", "2.11", "png211")
    reg.register("gif", "1", "gif1")
    return reg


def test_smoke_register_and_get():
    reg = Registry()
    reg.register("bmp", "1.0.0", "b")
    assert reg.get("bmp") == "b"


def test_smoke_names():
    assert loaded().names() == ["gif", "png"]


def test_smoke_plugin_type():
    assert isinstance(Registry().register("a", "1", 1), Plugin)


def test_numeric_version_ordering():
    assert loaded().get("png") == "png211"


def test_equal_priority_newest_first():
    reg = loaded()
    assert [p.obj for p in reg.plugins("png")] == ["png211", "png23"]


def test_priority_is_respected():
    reg = loaded()
    reg.register("png", "1.0", "legacy", priority=10)
    assert reg.get("png") == "legacy"


def test_versions_oldest_first():
    assert loaded().versions("png") == ["2.3.0", "2.11.0"]


def test_replace_flag_works():
    reg = loaded()
    reg.register("gif", "1.0.0", "gif-new", replace=True)
    assert reg.get("gif") == "gif-new"


def test_major_filter_exact():
    reg = loaded()
    reg.register("png", "3.0", "png3")
    assert reg.get("png", major=2) == "png211"


def test_unregister_missing_version_raises():
    reg = loaded()
    with pytest.raises(PluginNotFound):
        reg.unregister("gif", "9")


def test_discover_validation_is_atomic():
    reg = Registry()
    with pytest.raises(ValueError):
        reg.discover({"webp@1": "w", "tiff@one": "t"})
    assert reg.names() == []


def test_discover_skips_registered_version():
    reg = loaded()
    assert reg.discover({"gif@1.0": "dup", "svg@1": "svg"}) == ["svg@1.0.0"]


def test_discover_default_version():
    reg = Registry()
    reg.discover({"heic": Loader("h")})
    assert reg.versions("heic") == ["0.0.0"]


def test_discover_last_at_sign():
    reg = Registry()
    reg.discover({"@scope/pkg@4.1": "s"})
    assert reg.get_exact("@scope/pkg", "4.1") == "s"


def test_duplicate_message_text():
    reg = loaded()
    with pytest.raises(DuplicatePlugin, match="gif 1.0.0 is already registered"):
        reg.register("gif", "1", "again")


def test_not_found_message_mentions_major():
    with pytest.raises(PluginNotFound, match="with major 7"):
        loaded().get("png", major=7)


def test_plugin_version_keeps_original_text():
    assert Registry().register("a", "1.2", None).version == "1.2"


def test_duplicate_is_a_value_error():
    reg = loaded()
    with pytest.raises(ValueError):
        reg.register("gif", "1", "again")


def test_plugin_error_base():
    with pytest.raises(PluginError):
        loaded().get("jpeg")


def test_scenario_codec_registry():
    reg = Registry()
    reg.register("zip", "1.9", "z19")
    reg.register("zip", "1.10", "z110")
    reg.register("zip", "2", "z2", priority=-1)
    reg.register("zip", "0.5", "z05", priority=3)
    assert [p.obj for p in reg.plugins("zip")] == ["z05", "z110", "z19", "z2"]
    assert reg.get("zip", major=1) == "z110"
    assert reg.versions("zip") == ["0.5.0", "1.9.0", "1.10.0", "2.0.0"]
    with pytest.raises(DuplicatePlugin):
        reg.register("zip", "1.10.0", "again")
    reg.register("zip", "1.10.0", "replaced", priority=3, replace=True)
    assert reg.get("zip") == "replaced"
    with pytest.raises(PluginNotFound):
        reg.unregister("zip", "7")
    with pytest.raises(ValueError):
        reg.discover({"tar@1": "t", "broken@1.x": "b"})
    assert reg.names() == ["zip"]
    assert reg.discover({"zip@1.9": "dup", "tar": "t", "org@tar@3": "o"}) == ["tar@0.0.0", "org@tar@3.0.0"]
