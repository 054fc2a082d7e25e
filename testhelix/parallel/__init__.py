"""Running many task evaluations at once: the work backends, the jobs they carry, and progress.

A backend (the `Backend` Protocol of testhelix/helix/jobs.py, chosen by testhelix/parallel/build.py
`make_backend`) takes `TaskJob`s and yields `(job, result)` pairs in completion order to the calling
(driver) thread, which alone writes the run store. Two backends:

- `local` (testhelix/parallel/local.py): a thread pool in this process sharing one executor and the
  model clients; the right choice on one machine, because a task mostly waits on its model;
- `ray` (testhelix/parallel/ray_backend.py): Ray actors on a cluster, each with its own executor and
  model clients built from the run's `RunSetup` (testhelix/run/setup.py) by the function the driver's
  builder hands it, so no backend imports the runner (only the builder, testhelix/parallel/build.py,
  does: it sits above both).

Results do not depend on the backend, on `jobs`, or on the order in which tasks finish: every task
and every pair derives its randomness from its own seed, pairs spend fixed shares of the task budget
(testhelix/agent/budget.py), and every stored result is keyed by what it is, not when it came.
"""

from __future__ import annotations

from testhelix.parallel.jobs import WorkerSettings, default_jobs

__all__ = ["WorkerSettings", "default_jobs"]
