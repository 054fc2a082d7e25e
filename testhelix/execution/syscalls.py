"""The few Linux syscalls the sandbox needs that Python 3.11 does not wrap, called through ctypes."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID = 0x00020000, 0x08000000, 0x20000000
CLONE_NEWNET, CLONE_NEWCGROUP = 0x40000000, 0x02000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def _encoded(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    rc = _libc.mount(_encoded(source), _encoded(target), _encoded(fstype), ctypes.c_ulong(flags), _encoded(data))
    _check(rc, f"mount {target}")


def bind_readonly(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), "prctl")


def umount(target: str) -> None:
    _check(_libc.umount2(target.encode(), ctypes.c_int(MNT_DETACH)), f"umount {target}")


# seccomp, in the test process: refuse
# - socket(AF_UNIX, ...): a listening unix socket anywhere under a folder the sandbox mounts
#   read-only would otherwise be reachable (connect() ignores read-only mounts);
# - every other address family but AF_INET, AF_INET6 and NETLINK_ROUTE (all three private to the
#   job's network namespace); AF_VSOCK's port space, for one, is the machine's;
# - socketpair(AF_UNIX, SOCK_DGRAM): an unbound datagram socket can still sendto() any path;
#   stream and seqpacket pairs stay allowed (multiprocessing, asyncio), and refuse addresses;
# - the kernel keyrings (add_key, request_key, keyctl): keys outlive the job and are shared;
# - io_uring and Linux AIO: they create sockets and files past these checks, and AIO reads take
#   RWF_NOWAIT (a page-cache residency probe);
# - what reads or steers the shared page cache: mincore, readahead, fadvise64, cachestat,
#   process_madvise, madvise(MADV_COLD / MADV_PAGEOUT), preadv2/pwritev2 with RWF_NOWAIT;
# - change notification, which tells one job what another opens: inotify, fanotify, fcntl(F_NOTIFY);
# - flock(2): a lock on a shared read-only file is seen by every job. POSIX and OFD locks
#   (fcntl F_SETLK & co., which sqlite needs) stay: every file a job can lock is private to its
#   fork server (read-only overlays and device nodes of its own, see sandbox.py).
# - sysinfo(2): the machine's free memory, load and process count, moved by other jobs. glibc
#   calls it only for sysconf(_SC_PHYS_PAGES / _SC_AVPHYS_PAGES), whose answer is then
#   unspecified (it ignores the error); qsort asks once per process, to choose its buffer, and
#   sorts correctly either way. /proc/meminfo shows a constant instead (machine_view.py).
# Abstract sockets are already private to the job's own network namespace.
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK, _NETLINK_ROUTE = 1, 2, 10, 16, 0
_F_NOTIFY, _MADV_COLD, _MADV_PAGEOUT, _RWF_NOWAIT = 1026, 20, 21, 0x8


@dataclass(frozen=True)
class _Arch:
    """Syscall numbers of one architecture; `refused` are refused whatever their arguments."""

    audit_arch: int
    socket: int
    socketpair: int
    fcntl: int
    madvise: int
    preadv2: int
    pwritev2: int
    refused: tuple[int, ...]


_SECCOMP_ARCH = {
    # keyrings 248-250, io_uring 425-427, io_setup 206, io_submit 209, mincore 27, readahead 187,
    # fadvise64 221, cachestat 451, process_madvise 440, inotify 253/254/294, fanotify 300/301, flock 73,
    # sysinfo 99
    "x86_64": _Arch(0xC000003E, 41, 53, 72, 28, 327, 328,
                    (248, 249, 250, 425, 426, 427, 206, 209, 27, 187, 221, 451, 440, 253, 254, 294, 300, 301, 73,
                     99)),
    # keyrings 217-219, io_uring 425-427, io_setup 0, io_submit 2, mincore 232, readahead 213,
    # fadvise64 223, cachestat 451, process_madvise 440, inotify 26/27, fanotify 262/263, flock 32,
    # sysinfo 179
    "aarch64": _Arch(0xC00000B7, 198, 199, 25, 233, 286, 287,
                     (217, 218, 219, 425, 426, 427, 0, 2, 232, 213, 223, 451, 440, 26, 27, 262, 263, 32, 179)),
}
_RET_ALLOW, _RET_EPERM = 0x7FFF0000, 0x00050000 | 1
_LD_ABS, _JEQ, _JGE, _JSET, _ALU_AND, _RET = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
_SOCK_DGRAM, _SOCK_TYPE_MASK, _X32_BIT = 2, 0xF, 0x40000000
_NR, _ARG = 0, 16  # offsets in seccomp_data: the call's number; args[i] (low 32 bits) at 16 + 8 * i


def _arg(i: int) -> tuple:
    return (_LD_ABS, 0, 0, _ARG + 8 * i)


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _filter_program(a: _Arch) -> list[tuple]:
    """The classic-BPF program. Jump targets are written as labels ("allow", "deny", ...) and
    turned into the relative offsets BPF wants at the end."""
    prog: list[tuple] = [
        (_LD_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 0, "deny", a.audit_arch),  # another ABI (e.g. 32-bit socketcall): refuse
        (_LD_ABS, 0, 0, _NR),
        (_JGE, "deny", 0, _X32_BIT),  # x32 calls: refuse
        *[(_JEQ, "deny", 0, nr) for nr in a.refused],
        (_JEQ, "socket", 0, a.socket),
        (_JEQ, "pair", 0, a.socketpair),
        (_JEQ, "fcntl", 0, a.fcntl),
        (_JEQ, "madvise", 0, a.madvise),
        (_JEQ, "rwf", 0, a.preadv2),
        (_JEQ, "rwf", "allow", a.pwritev2),
        ("socket",),
        _arg(0),  # the address family
        (_JEQ, "allow", 0, _AF_INET),
        (_JEQ, "allow", 0, _AF_INET6),
        (_JEQ, 0, "deny", _AF_NETLINK),
        _arg(2),  # the netlink protocol: only the namespace's own routing tables
        (_JEQ, "allow", "deny", _NETLINK_ROUTE),
        ("pair",),
        _arg(0),
        (_JEQ, 0, "allow", _AF_UNIX),
        _arg(1),  # the socket type (flags in its high bits)
        (_ALU_AND, 0, 0, _SOCK_TYPE_MASK),
        (_JEQ, "deny", "allow", _SOCK_DGRAM),
        ("fcntl",),
        _arg(1),  # the command
        (_JEQ, "deny", "allow", _F_NOTIFY),
        ("madvise",),
        _arg(2),  # the advice
        (_JEQ, "deny", 0, _MADV_COLD),
        (_JEQ, "deny", "allow", _MADV_PAGEOUT),
        ("rwf",),
        _arg(5),  # the RWF_* flags
        (_JSET, "deny", "allow", _RWF_NOWAIT),
        ("allow",),
        (_RET, 0, 0, _RET_ALLOW),
        ("deny",),
        (_RET, 0, 0, _RET_EPERM),
    ]
    labels: dict[str, int] = {}
    out: list[tuple] = []
    for ins in prog:
        if len(ins) == 1:
            labels[ins[0]] = len(out)
        else:
            out.append(ins)

    def rel(target: int | str, at: int) -> int:
        return labels[target] - at - 1 if isinstance(target, str) else target

    return [(code, rel(jt, i), rel(jf, i), k) for i, (code, jt, jf, k) in enumerate(out)]


def _compiled_filter() -> tuple[_SockFprog, ctypes.Array] | None:
    """The filter as the kernel takes it (None on other architectures), built once at import. The
    array is returned too: the program points into it."""
    arch = _SECCOMP_ARCH.get(os.uname().machine)
    if arch is None:
        return None
    program = _filter_program(arch)
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    return _SockFprog(len(program), filters), filters


_FILTER = _compiled_filter()
_installed = False  # in this process or an ancestor it was forked from after the install


def deny_unix_sockets() -> None:
    """Install the filter (needs no_new_privs or root). Other architectures: no filter.

    Once per process tree: a seccomp filter is inherited by every child forked after it and can
    never be removed, so the zygote installs it once (see zygote.py) and its jobs skip the kernel's
    per-install work (checking and translating the program, ~0.5 ms of CPU in each job). Where the
    zygote could not (no root, no no_new_privs), each test process installs it as before."""
    global _installed
    if _FILTER is None or _installed:
        return
    rc = _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(_FILTER[0]), 0, 0)
    _check(rc, "seccomp")
    _installed = True
