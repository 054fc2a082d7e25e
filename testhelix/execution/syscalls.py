"""The few Linux syscalls the sandbox needs that Python 3.11 does not wrap, called through ctypes."""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID = 0x00020000, 0x08000000, 0x20000000
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


# seccomp: refuse socket(AF_UNIX, ...) in the test process. A listening unix socket anywhere under
# a folder the sandbox mounts read-only would otherwise be reachable (connect() ignores read-only
# mounts); socketpair() stays allowed (multiprocessing, asyncio). Abstract sockets are already
# private to the job's network namespace.
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}  # audit arch, __NR_socket
_RET_ALLOW, _RET_EPERM = 0x7FFF0000, 0x00050000 | 1
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_AF_UNIX, _X32_BIT = 1, 0x40000000


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def unix_socket_filter_supported() -> bool:
    return os.uname().machine in _SECCOMP_ARCH


def deny_unix_sockets() -> None:
    """Install the filter (needs no_new_privs or root). Other architectures: no filter."""
    arch = _SECCOMP_ARCH.get(os.uname().machine)
    if arch is None:
        return
    audit_arch, nr_socket = arch
    program = [
        (_LD_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 0, 6, audit_arch),  # another ABI (e.g. 32-bit socketcall): refuse
        (_LD_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JGE, 4, 0, _X32_BIT),  # x32 calls: refuse
        (_JEQ, 0, 2, nr_socket),
        (_LD_ABS, 0, 0, 16),  # args[0], low 32 bits: the address family
        (_JEQ, 1, 0, _AF_UNIX),
        (_RET, 0, 0, _RET_ALLOW),
        (_RET, 0, 0, _RET_EPERM),
    ]
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    prog = _SockFprog(len(program), filters)
    rc = _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0)
    _check(rc, "seccomp")
