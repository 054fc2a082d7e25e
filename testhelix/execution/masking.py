"""What the namespaced sandbox hides: every project path that a folder it mounts happens to reach.

The sandbox mounts the Python installation that runs the harness (read-only), because pytest,
its plug-ins and the task's packages live there. That installation may also hold the project
itself: a wheel puts `testhelix/` (with `_data/`: the bundled pack's archive, kata sources,
references, mutants and trusted tests) into site-packages, an editable install puts `_data/`
there too plus a .pth file naming the checkout, and a checkout, a pack cache or a release ledger
may sit under a mounted folder. Each such path, where it is reachable inside the sandbox root, is
covered by an empty read-only mount (a folder) or by /dev/null (a file).

Why masking rather than a separate runtime environment holding only pytest & co: the test process
is forked from a zygote that has already imported pytest, hypothesis and coverage from this very
installation (that fork is what makes an execution cost ~50 ms instead of a fresh interpreter's
~300 ms), so the installation must be the same one; masking costs a few mounts once per fork
server and nothing per job. The executor names the paths (`hidden_paths`), the server applies them.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from pathlib import Path

from testhelix.execution.syscalls import MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_RDONLY, MS_REMOUNT, mount

HIDE_ENV = "TESTHELIX_HIDE_PATHS"  # JSON list, set by the executor for its fork servers
PROJECT_PACKAGES = ("testhelix", "autosaddler", "gtdd")
# Data folders of the project, named by the variables that move them (the defaults are added too).
DATA_ENVS = ("TESTHELIX_CACHE_DIR", "AUTOSADDLER_DATA_DIR", "XDG_CACHE_HOME", "XDG_DATA_HOME")


def hidden_paths() -> list[str]:
    """Host paths (resolved) the sandbox must not show, computed in the harness's process."""
    import testhelix

    out: set[str] = set()
    package = Path(testhelix.__file__).resolve().parent
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file():  # an editable install or a source checkout
        out.add(str(checkout))
    home = Path.home()
    data = [os.environ.get(name) for name in DATA_ENVS]
    data += [str(home / ".cache" / "testhelix"), str(home / ".local" / "share" / "autosaddler")]
    for d in filter(None, data):
        out.add(os.path.realpath(d))
    for entry in {*sys.path, str(package.parent), *_site_dirs(sys.prefix), *_site_dirs(sys.base_prefix)}:
        out.update(_project_entries(entry))
    return sorted(out)


def _site_dirs(prefix: str) -> list[str]:
    return glob.glob(os.path.join(prefix, "lib", "python*", "site-packages"))


def _project_entries(site: str) -> list[str]:
    """The project's packages, metadata and path hooks inside one import folder."""
    if not site or not os.path.isdir(site):
        return []
    names = os.listdir(site)
    found = []
    for name in names:
        base = name.split("-", 1)[0].split(".", 1)[0].lower()
        stem = name.lower()
        if name in PROJECT_PACKAGES or (base in PROJECT_PACKAGES and stem.endswith((".dist-info", ".egg-info"))) \
                or (stem.endswith(".pth") and any(p in stem for p in PROJECT_PACKAGES)) \
                or (stem.startswith("__editable__") and any(p in stem for p in PROJECT_PACKAGES)):
            found.append(os.path.realpath(os.path.join(site, name)))
    return found


def paths_from_env() -> list[str]:
    """The executor's list; a process started without one (GTDD's trace isolation, a task's build
    script) computes it here: its own packages and data folders, from its own environment."""
    if HIDE_ENV not in os.environ:
        return hidden_paths()
    try:
        return [str(p) for p in json.loads(os.environ[HIDE_ENV])]
    except ValueError:
        return hidden_paths()


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def mask(root: str, paths: list[str], mounted: list[str]) -> None:
    """Cover each path that a folder in `mounted` (bound below `root` at the same path) reaches.
    A path that holds a mounted folder (a checkout holding its .venv) is not reachable as such:
    only the mounted folder is, and that is checked on its own."""
    for path in paths:
        if not any(_below(path, m) for m in mounted) or any(_below(m, path) and m != path for m in mounted):
            continue
        inside = root + path
        try:
            if os.path.isdir(inside) and not os.path.islink(inside):
                mount("tmpfs", inside, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k")
            elif os.path.lexists(inside) and not os.path.islink(inside):
                mount("/dev/null", inside, None, MS_BIND)
                mount(None, inside, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)  # a device: no MS_NODEV
        except OSError:
            continue
