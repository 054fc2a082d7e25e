"""The read-only files a job can see, held in RAM: reading one tells no other job anything.

Jobs share the host's page cache. A read of a file whose pages are not in memory is slow, and it
leaves them in memory, so a job can post bits by reading files no one reads and another job (the
next one, or one running at the same time on another server) can read them by timing its own
reads. Dropping what a job read before its server's next job (pagecache.py) closes the board
between jobs one after another, never between jobs running at the same time.

The view closes both by construction: the executor copies, once per machine and content, what a
job can use of the machine into a tmpfs of its own (charged to the host process that builds it,
never to a job's cgroup), and the fork servers mount their read-only overlays over that copy
instead of the host folders. Every page a job can read is then resident whoever reads it, and
stays so: tmpfs pages leave memory only to swap (the tmpfs is mounted `noswap` where swap is on;
ramfs where the kernel refuses that), and no call a job may make evicts them. tmpfs keeps its
dentries and inodes in memory too, and keeps no negative dentries, so `stat` timing of the view
says nothing either.

What the view holds (`plan`): /etc; each Python installation in play (the interpreter's prefix
and its base; a base installation's site-packages only where an interpreter imports from it);
of /usr, a few programs suites run (`TOOLS`), the time-zone data and the C.UTF-8 locale, and
every shared library those programs, the interpreters and every extension module of the copied
installations need (elfdeps.py). The project's own paths (masking.py) are left out. Anything
else of /usr, which a job saw before, is absent.

Views live under /run/testhelix-views/<key> (the key digests the plan and the stat of what it
copies); an executor holds a shared lock on its view while it runs, and a builder deletes views
no one holds. `TESTHELIX_RAM_VIEW=0` keeps the host folders (with the per-job drop).
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from testhelix.execution.elfdeps import closure, is_elf, loader_cache
from testhelix.execution.syscalls import MS_NODEV, MS_NOSUID, mount, umount

VIEWS = Path("/run/testhelix-views")
RAM_VIEW_ENV = "TESTHELIX_RAM_VIEW"  # "0": no view (host folders, pagecache.py's per-job drop)
VIEW_DIR_ENV = "TESTHELIX_RAM_VIEW_DIR"  # set by the executor for its fork servers
_FORMAT = 1  # changes what a view holds: part of the key
TOOLS = (
    "sh", "bash", "dash", "env", "cat", "echo", "printf", "ls", "cp", "mv", "rm", "mkdir", "rmdir", "touch", "ln",
    "chmod", "head", "tail", "tr", "wc", "sort", "uniq", "cut", "paste", "tee", "grep", "egrep", "fgrep", "sed",
    "awk", "mawk", "gawk", "find", "xargs", "true", "false", "test", "[", "sleep", "pwd", "basename", "dirname",
    "readlink", "realpath", "date", "diff", "cmp", "yes", "seq", "expr", "mktemp", "stat", "uname", "id", "which",
    "timeout", "nproc", "du", "tar", "gzip", "gunzip", "zcat", "od", "md5sum", "sha256sum", "base64", "kill",
)
TOOL_DIRS = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")
DATA_TREES = ("/usr/share/zoneinfo", "/usr/lib/locale/C.utf8", "/usr/lib/locale/C.UTF-8")
TOP_FOLDERS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "etc")


def swap_active() -> bool:
    try:
        return len(Path("/proc/swaps").read_text().strip().splitlines()) > 1
    except OSError:
        return False


def _below(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _venv_base(prefix: str) -> tuple[str | None, bool]:
    """(the base installation a virtualenv was made from, whether it imports from the base's
    site-packages); (None, False) for a prefix that is no virtualenv."""
    try:
        lines = Path(prefix, "pyvenv.cfg").read_text().splitlines()
    except OSError:
        return None, False
    cfg = {k.strip().lower(): v.strip() for k, _, v in (line.partition("=") for line in lines)}
    home = cfg.get("home")
    base = os.path.realpath(os.path.dirname(home)) if home else None
    return base, cfg.get("include-system-site-packages", "false").lower() == "true"


@dataclass(frozen=True)
class ViewPlan:
    trees: tuple[str, ...]  # host folders copied whole
    files: tuple[str, ...]  # single host paths, copied with their symlink chains
    skip: tuple[str, ...]  # host paths left out of the trees

    def key(self) -> str:
        """Digest of the plan and of the stat of what it names: a package installed or removed
        changes its folder's time, and so the key."""
        seen: list = []
        for tree in self.trees:
            for folder in [tree, *glob.glob(os.path.join(tree, "*")), *glob.glob(os.path.join(tree, "lib", "python*",
                                                                                             "site-packages"))]:
                try:
                    st = os.lstat(folder)  # (not followed: /etc/mtab names /proc)
                except OSError:
                    continue
                seen.append((folder, st.st_ino, st.st_mtime_ns))
        for path in self.files:
            try:
                st = os.stat(path)
                seen.append((path, st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                continue
        text = json.dumps([_FORMAT, self.trees, self.files, self.skip, seen])
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def plan(prefixes: list[str], hidden: list[str]) -> ViewPlan:
    """What a job may read, for servers whose interpreters have these `sys.prefix` folders."""
    trees: list[str] = ["/etc"]
    needed_sites: set[str] = set()
    bases: set[str] = set()
    for prefix in map(os.path.realpath, prefixes):
        base, system_site = _venv_base(prefix)
        trees.append(prefix)
        if base is None:
            needed_sites.add(prefix)  # a base installation run directly imports from its own site-packages
        else:
            bases.add(base)
            if system_site:
                needed_sites.add(base)
    trees += sorted(bases - set(trees))
    # A hidden path holding a copied folder (a checkout holding its .venv) is not reachable as
    # such: only what lies below it and inside no copied folder is left out (as masking.py does).
    # Paths outside every copied folder are not in the view anyway (and kept out of its key).
    skip = [h for h in hidden if _below(h, tuple(trees)) and not any(_below(t, (h,)) and t != h for t in trees)]
    for base in bases - needed_sites:
        skip += glob.glob(os.path.join(base, "lib", "python*", "site-packages"))
    trees += [t for t in DATA_TREES if os.path.isdir(t)]
    tools = [os.path.join(d, t) for t in TOOLS for d in TOOL_DIRS if os.path.lexists(os.path.join(d, t))]
    elves = [p for p in tools if is_elf(p)]
    for tree in trees:
        for folder, dirs, names in os.walk(tree):
            dirs[:] = [d for d in dirs if not _below(os.path.join(folder, d), tuple(skip))]
            elves += [os.path.join(folder, n) for n in names
                      if (n.endswith(".so") or ".so." in n or os.path.basename(folder) == "bin")
                      and is_elf(os.path.join(folder, n))]
    libs = closure(elves, loader_cache())
    kept = tuple(trees)
    files = sorted({p for p in [*tools, *libs] if not _below(os.path.realpath(p), kept)})
    return ViewPlan(tuple(trees), tuple(files), tuple(sorted(set(skip))))


def _copy_regular(src: str, dst: str) -> None:
    if stat.S_ISREG(os.lstat(src).st_mode):  # sockets, pipes and devices are left out
        shutil.copy2(src, dst)


def _copy_path(path: str, dest: str) -> None:
    """Copy one host file and the symlinks on the way to it (folder parts resolved on the host:
    the sandbox root makes /lib, /bin ... the host's own links)."""
    for _ in range(40):
        here = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        target = dest + here
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.islink(here):
            link = os.readlink(here)
            if not os.path.lexists(target):
                os.symlink(link, target)
            path = os.path.join(os.path.dirname(here), link)
            continue
        if os.path.isfile(here) and not os.path.lexists(target):
            _copy_regular(here, target)
        return


def build(view_plan: ViewPlan, dest: str) -> None:
    skip = view_plan.skip

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if _below(os.path.join(folder, n), skip)]

    for name in TOP_FOLDERS:  # every real top-level folder the sandbox root overlays exists in the view
        if os.path.isdir("/" + name) and not os.path.islink("/" + name):
            os.makedirs(dest + "/" + name, exist_ok=True)
    for tree in view_plan.trees:
        shutil.copytree(tree, dest + tree, symlinks=True, ignore=ignore, copy_function=_copy_regular,
                        dirs_exist_ok=True)
    for path in view_plan.files:
        _copy_path(path, dest)


def _mount_views() -> None:
    if os.path.ismount(VIEWS):
        return
    VIEWS.mkdir(parents=True, exist_ok=True)
    options = "mode=0700,size=50%" + (",noswap" if swap_active() else "")
    try:
        mount("tmpfs", str(VIEWS), "tmpfs", MS_NOSUID | MS_NODEV, options)
    except OSError:
        if not swap_active():
            raise
        mount("ramfs", str(VIEWS), "ramfs", MS_NOSUID | MS_NODEV, "mode=0700")  # never swapped


@dataclass(frozen=True)
class View:
    path: Path
    lock_fd: int  # a shared flock held while this process uses the view
    built_s: float  # how long this process spent building it (0: it was there)


_held: dict[str, View] = {}


def _remove_unheld(keep: str) -> None:
    """Delete views (and half-built ones) no process holds a lock on."""
    for lock in VIEWS.glob("*.lock"):
        key = lock.name[:-len(".lock")]
        if key == keep:
            continue
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        for stale in [VIEWS / key, *VIEWS.glob(f"{key}.partial-*")]:
            shutil.rmtree(stale, ignore_errors=True)
        lock.unlink(missing_ok=True)
        os.close(fd)


def ensure_view(view_plan: ViewPlan) -> View:
    """The view of this plan, built if no process has built it; raises OSError where it cannot be
    (not root, no tmpfs)."""
    key = view_plan.key()
    if key in _held:
        return _held[key]
    _mount_views()
    fd = os.open(VIEWS / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    built = 0.0
    try:
        # Shared while the view is there (every process using it holds this); exclusive only to
        # build it (a conversion drops the shared lock first, so two builders cannot deadlock).
        fcntl.flock(fd, fcntl.LOCK_SH)
        if not (VIEWS / key).is_dir():
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not (VIEWS / key).is_dir():
                _remove_unheld(key)   # free the tmpfs of stale views before filling it with this one
                start = time.monotonic()
                partial = VIEWS / f"{key}.partial-{os.getpid()}"
                shutil.rmtree(partial, ignore_errors=True)
                build(view_plan, str(partial))
                os.rename(partial, VIEWS / key)
                built = time.monotonic() - start
            fcntl.flock(fd, fcntl.LOCK_SH)
    except BaseException:
        os.close(fd)
        raise
    _remove_unheld(key)
    view = _held[key] = View(VIEWS / key, fd, built)
    return view


def trees_in_memory(folder: Path) -> bool:
    """Mount a tmpfs for an executor's tree cache (True), where it can. A disk file system keeps a
    negative dentry for every name looked up and not found; a job's workspace is an overlay whose
    lower layers are the cached program and suite trees, which every job of that program or suite
    shares, so the next such job could time which names an earlier one looked up (measured:
    `bench/pagecache_channel.py --probe stat-tree`). tmpfs keeps none, and its pages stay resident."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        mount("tmpfs", str(folder), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0711" + (",noswap" if swap_active() else ""))
    except OSError:
        return False
    return True


def release_dead_tree_mounts(prefix: str = "testhelix-prism-", lock_name: str = ".owner.lock") -> int:
    """Unmount the tree tmpfs of executors that died without closing (their staging folder's
    owner lock is free), so that staging.reclaim_dead can remove the folder and its RAM is freed."""
    released = 0
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        folder = os.path.dirname(point)
        if not (point.endswith("/trees") and os.path.basename(folder).startswith(prefix)):
            continue
        try:
            fd = os.open(os.path.join(folder, lock_name), os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:  # reclaimed already (the lock exists before the tmpfs is mounted)
            fd = -1
        except OSError:
            continue
        if fd < 0:
            try:
                umount(point)
                released += 1
            except OSError:
                pass
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            umount(point)
            released += 1
        except OSError:
            pass  # its owner is alive
        finally:
            os.close(fd)
    return released


def wanted() -> bool:
    return os.environ.get(RAM_VIEW_ENV) != "0" and os.geteuid() == 0


def lower_for(host: str) -> str:
    """Inside a fork server: the folder to show at `host` (its copy in the view, or the host folder)."""
    view = os.environ.get(VIEW_DIR_ENV)
    if view:
        copy = view + os.path.realpath(host)
        if os.path.isdir(copy):
            return copy
    return host
