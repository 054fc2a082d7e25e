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


class EvaluationIncomplete(UserError):
    """The provider prevented a task evaluation (outage, rate limit past the retries, timeout,
    malformed responses). It is a state, never a score: stored as incomplete, retried by resume.
    A command that ends on it exits 3 with one line naming the cause."""

    exit_code = 3

    def __init__(self, task_id: str, cause: str, detail: str):
        super().__init__(f"evaluation of {task_id} incomplete ({cause}): {detail[:300]}; "
                         "nothing was scored; run the same command again (or resume) once the provider recovers")
        self.task_id, self.cause, self.detail = task_id, cause, detail
