"""Which shared libraries a set of ELF files needs: the dynamic loader's closure, read from the files.

The RAM view (ram_view.py) holds only what a job can use of /usr: the interpreter's and every
extension module's libraries, and a few programs with theirs. The closure is read from each
file's PT_INTERP and DT_NEEDED entries and resolved the way the loader does (DT_RPATH/DT_RUNPATH
with $ORIGIN, then the loader's cache as `ldconfig -p` lists it, then the default folders). The
files are parsed, never run: `ldd` would start the loader on them, and a task environment's
extension modules come from its requirements.
"""

from __future__ import annotations

import os
import struct
import subprocess
from collections.abc import Iterable

_PT_LOAD, _PT_DYNAMIC, _PT_INTERP = 1, 2, 3
_DT_NEEDED, _DT_STRTAB, _DT_RPATH, _DT_RUNPATH = 1, 5, 15, 29
DEFAULT_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")


def is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _read_dynamic(path: str) -> tuple[str | None, list[str], list[str]]:
    """(PT_INTERP, DT_NEEDED names, search folders from DT_RPATH/DT_RUNPATH) of a 64-bit
    little-endian ELF file; empty for anything else (32-bit, big-endian, damaged)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return None, [], []
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        loads, dynamic, interp = [], None, None
        for i in range(phnum):
            p_type, _flags, off, vaddr, _pa, filesz, _memsz, _al = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
            if p_type == _PT_LOAD:
                loads.append((vaddr, off, filesz))
            elif p_type == _PT_DYNAMIC:
                dynamic = (off, filesz)
            elif p_type == _PT_INTERP:
                f.seek(off)
                interp = f.read(filesz).split(b"\0", 1)[0].decode(errors="replace")
        if dynamic is None:
            return interp, [], []
        f.seek(dynamic[0])
        raw = f.read(dynamic[1])
        entries = [struct.unpack_from("<qQ", raw, at) for at in range(0, len(raw) - 15, 16)]
        strtab = next((v for tag, v in entries if tag == _DT_STRTAB), None)
        if strtab is None:
            return interp, [], []
        base = next((off + strtab - vaddr for vaddr, off, size in loads if vaddr <= strtab < vaddr + size), None)
        if base is None:
            return interp, [], []

        def string(at: int) -> str:
            f.seek(base + at)
            return f.read(4096).split(b"\0", 1)[0].decode(errors="replace")

        needed = [string(v) for tag, v in entries if tag == _DT_NEEDED]
        origin = os.path.dirname(os.path.realpath(path))
        paths = [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
                 for tag, v in entries if tag in (_DT_RPATH, _DT_RUNPATH) for d in string(v).split(":") if d]
        return interp, needed, paths


def loader_cache() -> dict[str, str]:
    """soname -> path of this machine's loader cache (`ldconfig -p`), native entries only."""
    try:
        text = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    machine = "x86-64" if os.uname().machine == "x86_64" else "AArch64"
    found: dict[str, str] = {}
    for line in text.splitlines():
        name, _, rest = line.strip().partition(" (")
        if "=>" in rest and machine in rest.split(")")[0]:
            found.setdefault(name, rest.split("=>", 1)[1].strip())
    return found


def closure(files: Iterable[str], cache: dict[str, str] | None = None) -> set[str]:
    """Every library path (as the loader would open it, symlinks unresolved) that `files` need,
    directly or through each other, plus their program interpreter; the files themselves excluded."""
    cache = loader_cache() if cache is None else cache
    todo, seen, out = list(files), set(), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            interp, needed, search = _read_dynamic(path)
        except OSError:
            continue
        if interp and os.path.exists(interp):
            interp = os.path.normpath(interp)
            out.add(interp)
            todo.append(interp)
        for name in needed:
            hit = next((os.path.join(d, name) for d in search if os.path.exists(os.path.join(d, name))), None)
            hit = hit or cache.get(name) or next((os.path.join(d, name) for d in DEFAULT_DIRS
                                                  if os.path.exists(os.path.join(d, name))), None)
            if hit:
                hit = os.path.normpath(hit)
                out.add(hit)
                todo.append(hit)
    return out
