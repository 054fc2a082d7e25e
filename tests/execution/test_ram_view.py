"""What the RAM view holds (ram_view.py) and the library closure it is computed from (elfdeps.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from testhelix.execution import ram_view
from testhelix.execution.elfdeps import closure, is_elf


def test_the_interpreter_needs_the_c_library_and_its_loader():
    libs = closure([os.path.realpath(sys.executable)])
    names = {os.path.basename(p) for p in libs}
    assert any(n.startswith("libc.so") for n in names), libs
    assert any(n.startswith("ld-linux") for n in names), libs
    assert os.path.realpath(sys.executable) not in libs


def test_a_file_that_is_no_elf_needs_nothing(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    assert not is_elf(str(script))
    assert closure([str(script)], cache={}) == set()


def test_the_plan_copies_the_installation_and_leaves_project_paths_out(tmp_path):
    hidden_inside = os.path.join(os.path.realpath(sys.prefix), "lib", "not-a-real-project-folder")
    hidden_outside = str(tmp_path / "data")
    plan = ram_view.plan([sys.prefix], [hidden_inside, hidden_outside])
    assert os.path.realpath(sys.prefix) in plan.trees and "/etc" in plan.trees
    assert hidden_inside in plan.skip
    assert hidden_outside not in plan.skip  # outside every copied folder: not in the view anyway
    assert any(os.path.basename(p).startswith("libc.so") for p in plan.files)
    assert not any(p.startswith(os.path.realpath(sys.prefix) + "/") for p in plan.files)


def test_a_checkout_holding_the_virtualenv_does_not_hide_it(tmp_path):
    """The same rule as masking.py: a hidden folder that holds a copied one is not reachable as such."""
    prefix = os.path.realpath(sys.prefix)
    plan = ram_view.plan([sys.prefix], [os.path.dirname(prefix)])
    assert prefix in plan.trees and os.path.dirname(prefix) not in plan.skip


def test_the_key_follows_what_the_plan_copies(tmp_path):
    tree = tmp_path / "tree"
    (tree / "lib").mkdir(parents=True)
    plan = ram_view.ViewPlan((str(tree),), (), ())
    before = plan.key()
    assert plan.key() == before
    (tree / "lib" / "new_package").mkdir()
    assert plan.key() != before


def test_build_copies_trees_files_and_symlink_chains(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    (src / "secret").mkdir()
    (src / "secret" / "labels.txt").write_text("hidden\n")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libx.so.1.2").write_text("elf")
    os.symlink("libx.so.1.2", lib / "libx.so.1")
    dest = tmp_path / "view"
    ram_view.build(ram_view.ViewPlan((str(src),), (str(lib / "libx.so.1"),), (str(src / "secret"),)), str(dest))
    assert (Path(str(dest) + str(src)) / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert not Path(str(dest) + str(src / "secret")).exists()
    copied = Path(str(dest) + str(lib))
    assert os.readlink(copied / "libx.so.1") == "libx.so.1.2" and (copied / "libx.so.1.2").read_text() == "elf"


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting the views' tmpfs needs root")
def test_the_view_is_built_once_and_shared(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("a = 1\n")
    plan = ram_view.ViewPlan((str(tree),), (), ())
    view = ram_view.ensure_view(plan)
    assert Path(str(view.path) + str(tree / "a.py")).read_text() == "a = 1\n"
    assert ram_view.ensure_view(plan) is view  # this process holds it: no second build


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_the_tree_tmpfs_of_a_dead_executor_is_unmounted(tmp_path):
    import fcntl

    alive, dead = tmp_path / "testhelix-prism-alive", tmp_path / "testhelix-prism-dead"
    for folder in (alive, dead):
        (folder / "trees").mkdir(parents=True)
        (folder / ".owner.lock").write_text("1\n")
    held = os.open(alive / ".owner.lock", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # what a live executor's staging folder holds (testhelix/core/staging.py)
    try:
        assert ram_view.trees_in_memory(alive / "trees") and ram_view.trees_in_memory(dead / "trees")
        ram_view.release_dead_tree_mounts()
        assert os.path.ismount(alive / "trees") and not os.path.ismount(dead / "trees")
    finally:
        os.close(held)
        ram_view.release_dead_tree_mounts()
    assert not os.path.ismount(alive / "trees")
