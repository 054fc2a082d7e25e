"""Forget, after each job, which shared files it read: a board in the page cache holds nothing for a later job.

The fallback for servers that show host folders (no RAM view: not root, or TESTHELIX_RAM_VIEW=0);
with the view (ram_view.py) nothing a job reads can be evicted, and this is not used.

Every job reads the host's files (/usr, /etc, the Python installation) through one page cache. The
calls that read or clear residency are refused (syscalls.py), but a plain read is fast when the
page is in memory and slow when it comes from disk, so a job can post bits by reading rarely read
files and a later job can read them by timing (bench/pagecache_channel.py measures it). The fork
server watches its own read-only overlays (machine_view.py: one superblock per server, so it
sees its own jobs only) with fanotify, and before its next job starts it drops from the page
cache every file the job opened there (posix_fadvise DONTNEED, on the host file behind the
overlay). What the warm interpreter needs was imported by the zygote before any job and is not
opened again by a job; a file a job opened is cold again for the next one whoever read it first.

The queue is unlimited (a job that opens every file under /usr queues an event per file, in the
server's memory, and makes the next job's start wait while they are dropped: a cost to the judge,
not a channel). What this cannot do: a job running at the same time on another server sees the page cache live
(documented with its measured capacity in docs/design.md section 6); pages mapped by a running
process, or dirty, are not dropped (the host files are read-only to jobs: none are dirty).
"""

from __future__ import annotations

import ctypes
import os
import struct

_FAN_CLOEXEC, _FAN_NONBLOCK, _FAN_CLASS_NOTIF, _FAN_UNLIMITED_QUEUE = 0x1, 0x2, 0x0, 0x10
_FAN_MARK_ADD, _FAN_MARK_FILESYSTEM, _FAN_OPEN, _FAN_Q_OVERFLOW = 0x1, 0x100, 0x20, 0x4000
_AT_FDCWD = -100
_EVENT = struct.Struct("IBBHQii")  # struct fanotify_event_metadata
_EVENTS_PER_READ = 32
DROP_ENV = "TESTHELIX_DROP_READS"  # "0": keep what jobs read cached (only to measure the channel it closes)


class ReadFiles:
    """The files opened under some folders since the last `drop`; None where fanotify is unavailable."""

    def __init__(self, fd: int):
        self.fd = fd
        self.overflowed = False

    @classmethod
    def watch(cls, folders: list[str]) -> ReadFiles | None:
        libc = ctypes.CDLL(None, use_errno=True)
        init, mark = getattr(libc, "fanotify_init", None), getattr(libc, "fanotify_mark", None)
        if init is None or mark is None or not folders or os.environ.get(DROP_ENV) == "0":
            return None
        mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
        flags = _FAN_CLOEXEC | _FAN_NONBLOCK | _FAN_CLASS_NOTIF | _FAN_UNLIMITED_QUEUE
        fd = init(flags, os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC | os.O_NOATIME)
        if fd < 0:
            return None
        for folder in folders:
            if mark(fd, _FAN_MARK_ADD | _FAN_MARK_FILESYSTEM, _FAN_OPEN, _AT_FDCWD, folder.encode()) != 0:
                os.close(fd)
                return None
        return cls(fd)

    def drop(self) -> int:
        """Drop from the page cache every file opened since the last call; returns how many."""
        dropped = 0
        while True:
            try:  # each event read opens a descriptor in this process: a few at a time
                data = os.read(self.fd, _EVENT.size * _EVENTS_PER_READ)
            except BlockingIOError:
                return dropped
            except OSError:  # out of descriptors, say: the rest waits for the next job's start
                return dropped
            at = 0
            while at + _EVENT.size <= len(data):
                length, _vers, _res, _meta, mask, fd, _pid = _EVENT.unpack_from(data, at)
                at += max(length, _EVENT.size)
                if mask & _FAN_Q_OVERFLOW:
                    self.overflowed = True  # (cannot happen with an unlimited queue; kept honest)
                if fd < 0:
                    continue
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    dropped += 1
                except OSError:
                    pass
                finally:
                    os.close(fd)

    def close(self) -> None:
        os.close(self.fd)
