"""A job's workspace as overlay mounts: no per-execution copy or link, nothing to delete afterwards.

With the namespaced sandbox, PID 1 of each job mounts, inside the job's private mount namespace:

    <scratch>             a tmpfs (its size caps what the job can write into its workspace)
    /workspace            overlay: the cached program tree, read-only, under an upper layer on it
    /workspace/suite      overlay: the cached suite tree the same way (covering a suite/ folder
                          the program might ship, as the submitted suite wins)

Reads come straight from the cached trees; writes land in the tmpfs, which disappears with the
namespace, so there is no teardown. Building the same view with hard links costs a link per file
and a tree walk to delete it (about 2.5 ms for a small kata program, proportionally more for a
repository). The upper layers mirror every folder of the trees, owned by the sandbox uid, so the
test can create files anywhere as it could in a linked workspace; the cached files themselves are
root-owned and read-only in both.

`overlay_supported` is probed once per server; without overlayfs the server builds linked
workspaces as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from testhelix.execution.syscalls import mount, umount
from testhelix.execution.workspace import HOME_SUBDIR, SUITE_SUBDIR


@dataclass(frozen=True)
class Layers:
    """What a job's workspace is made of, for the sandbox to mount."""

    program: Path  # cached, read-only tree
    suite: Path  # cached, read-only tree
    program_folders: tuple[str, ...]  # relative paths of every folder of each tree, parents first
    suite_folders: tuple[str, ...]
    owner: int  # uid that owns the writable layer
    hidden: tuple[str, ...] = ()  # files (workspace-relative) this job must not see


def _mirror_folders(folders: tuple[str, ...], upper: Path, owner: int) -> None:
    for rel in folders:
        target = upper / rel
        target.mkdir(exist_ok=True)
        os.chown(target, owner, owner)


def _overlay(lower: Path, upper: str, work: str, target: str, flags: int) -> None:
    """Mount an overlay naming no host folder: the lower tree through a descriptor
    (/proc/self/fd/N) and the upper and work folders relative to the current folder, so
    /proc/self/mountinfo inside the job shows neither the staging folder nor a tree's digest."""
    os.makedirs(work, exist_ok=True)
    fd = os.open(lower, os.O_PATH | os.O_DIRECTORY)
    try:
        mount("overlay", target, "overlay", flags, f"lowerdir=/proc/self/fd/{fd},upperdir={upper},workdir={work}")
    finally:
        os.close(fd)


def mount_layers(layers: Layers, target: str, scratch: Path, size_mb: int, flags: int) -> None:
    """Mount the workspace at `target` (runs as root in the job's own mount namespace; leaves the
    current folder at `scratch`, which the job's chroot leaves behind)."""
    mount("tmpfs", str(scratch), "tmpfs", flags, f"mode=0700,size={size_mb}m")
    os.chdir(scratch)
    program_up, suite_up = scratch / "program-up", scratch / "suite-up"
    _mirror_folders(layers.program_folders, program_up, layers.owner)
    _mirror_folders(layers.suite_folders, suite_up, layers.owner)
    for extra in (HOME_SUBDIR, SUITE_SUBDIR):  # the home folder, and the suite overlay's mount point
        (program_up / extra).mkdir(exist_ok=True)
        os.chown(program_up / extra, layers.owner, layers.owner)
    _overlay(layers.program, "program-up", "program-work", target, flags)
    _overlay(layers.suite, "suite-up", "suite-work", f"{target}/{SUITE_SUBDIR}", flags)
    for rel in layers.hidden:
        os.unlink(os.path.join(target, rel))  # unlinking through the overlay leaves a whiteout above it


def overlay_supported(probe_dir: Path) -> bool:
    """Can this kernel mount an overlay over the tree cache's file system with a tmpfs upper layer?"""
    lower, scratch, merged = probe_dir / "lower", probe_dir / "scratch", probe_dir / "merged"
    for d in (lower, scratch, merged):
        d.mkdir(parents=True, exist_ok=True)
    (lower / "probe").write_text("1")
    try:
        mount("tmpfs", str(scratch), "tmpfs", 0, "mode=0700,size=1m")
        try:
            (scratch / "up").mkdir()
            here = os.getcwd()
            os.chdir(scratch)
            try:
                _overlay(lower, "up", "work", str(merged), 0)
            finally:
                os.chdir(here)
            ok = (merged / "probe").read_text() == "1"
            umount(str(merged))
        finally:
            umount(str(scratch))
        return ok
    except OSError:
        return False
