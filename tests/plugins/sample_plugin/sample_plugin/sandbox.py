"""A sandbox outside the project: `--sandbox sample` (entry point) or
`--sandbox sample_plugin.sandbox:MarkedPlainSandbox` (dotted path).

The project's plain fallback with a policy of its own: every test process gets at most
OPEN_FILES open files, whatever the job's limits say. A suite can observe that (its
RLIMIT_NOFILE), which tells a test that this sandbox, and no other, confined it.
"""

from __future__ import annotations

from dataclasses import replace

from testhelix.execution.outcome import Limits
from testhelix.execution.sandbox import PlainSandbox

OPEN_FILES = 200


class MarkedPlainSandbox(PlainSandbox):
    kind = "sample-plain"

    def confine(self, limits: Limits, uid: int, cgroup: bool = False) -> None:
        super().confine(replace(limits, nofile=min(limits.nofile, OPEN_FILES)), uid, cgroup)
