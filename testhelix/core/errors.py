"""User-facing errors.

Anything caused by bad input (a file that does not parse, a value out of bounds, a task whose
digest disagrees with its manifest) raises `UserError`. The command-line entry points turn it into
one clear message on stderr and exit code 2, never a traceback.

Problems of the environment (a full disk, a read-only folder, a missing permission) become
`EnvironmentProblem` with the same exit code 2 and a message naming the path; everything a run
committed before the failure is kept and `resume` (or re-running the command) continues once the
cause is fixed.
"""

from __future__ import annotations

import errno


class UserError(Exception):
    """Bad input from the user; `problems` optionally lists (path, message) pairs."""

    exit_code = 2

    def __init__(self, message: str, problems: list[tuple[str, str]] | None = None):
        super().__init__(message)
        self.message = message
        self.problems = list(problems or [])

    def render(self) -> str:
        lines = [f"error: {self.message}"]
        lines += [f"  {path}: {msg}" for path, msg in self.problems]
        return "\n".join(lines)


class EvaluationIncomplete(UserError):
    """The provider prevented a task evaluation (outage, rate limit past the retries, timeout,
    malformed responses). It is a state, never a score: stored as incomplete, retried by resume.
    A command that ends on it exits 3 with one line naming the cause."""

    exit_code = 3

    def __init__(self, task_id: str, cause: str, detail: str):
        super().__init__(f"evaluation of {task_id} incomplete ({cause}): {detail[:300]}; "
                         "nothing was scored; run the same command again (or resume) once the provider recovers")
        self.task_id, self.cause, self.detail = task_id, cause, detail
class EnvironmentProblem(UserError):
    """The machine, not the input: no space left, no permission, a read-only file system."""


_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ENOENT: "no such file or folder",
    errno.EIO: "input/output error",
    errno.EMFILE: "too many open files",
    errno.ENAMETOOLONG: "file name too long",
}

RESUME_HINT = "nothing committed is lost; fix the cause and run the command again"


def _retry_hint() -> str:
    """The advice after a full disk: what continues the command that is running (a search with
    `autosaddler resume`; any other command by running it again, which skips finished work)."""
    import os
    import sys

    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if program == "autosaddler" and command in ("search", "resume"):
        return "nothing committed is lost; fix the cause, then continue with `autosaddler resume RUN_DIR`"
    if program in ("testhelix", "autosaddler", "gtdd") and command:
        return f"nothing committed is lost; fix the cause and run `{program} {command}` again (finished work is kept)"
    return RESUME_HINT


def describe_os_error(err: OSError, path: object | None = None, open_paths: set[str] | None = None) -> EnvironmentProblem:
    """One line naming the path and the reason, e.g. 'no space left on device (/runs/x/run.duckdb)';
    when the system names no path, the stores this process has open (`open_paths`) are named."""
    import shutil

    if isinstance(err, shutil.Error) and err.args and isinstance(err.args[0], list) and err.args[0]:
        # copytree gathers one (source, destination, reason) per file that failed: name the first
        src, dst, why = err.args[0][0]
        more = f" and {len(err.args[0]) - 1} more file(s)" if len(err.args[0]) > 1 else ""
        low = str(why).lower()
        code = next((c for c, r in _REASONS.items() if r in low or (c == errno.ENOSPC and "no space" in low)), None)
        reason = _REASONS.get(code or -1) or str(why)[:200]
        hint = f"; {_retry_hint()}" if code in (errno.ENOSPC, errno.EDQUOT, errno.EIO) else ""
        return EnvironmentProblem(f"{reason} (copying {src} -> {dst}{more}){hint}")
    reason = _REASONS.get(err.errno or -1) or (err.strerror or str(err)).lower()
    where = path or err.filename or (", ".join(sorted(open_paths)) if open_paths else
                                     "the system did not name the file")
    if getattr(err, "filename2", None):
        where = f"{where} -> {err.filename2}"
    hint = f"; {_retry_hint()}" if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO) else ""
    return EnvironmentProblem(f"{reason} ({where}){hint}")


def describe_store_error(message: str, open_paths: set[str]) -> EnvironmentProblem | None:
    """A DuckDB I/O failure (its message has no errno) as an EnvironmentProblem, if it is one."""
    low = message.lower()
    for code, reason in _REASONS.items():
        if code in (errno.ENOENT, errno.EISDIR, errno.ENOTDIR):
            continue
        if reason in low or (code == errno.ENOSPC and "no space" in low):
            where = ", ".join(sorted(open_paths)) or "the run store"
            hint = f"; {_retry_hint()}" if code in (errno.ENOSPC, errno.EDQUOT, errno.EIO) else ""
            return EnvironmentProblem(f"{reason} ({where}){hint}")
    return None
