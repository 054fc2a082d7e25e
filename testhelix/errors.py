"""User-facing errors.

Anything caused by bad input (a file that does not parse, a value out of bounds, a task whose
digest disagrees with its manifest) raises `UserError`. The command-line entry points turn it into
one clear message on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations


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
