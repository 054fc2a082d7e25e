"""The click options every command that runs many tasks shares: --jobs, --backend, --ray-address."""

from __future__ import annotations

import click

from testhelix.parallel.jobs import BACKENDS


def concurrency_options(fn):
    fn = click.option("--ray-address", default=None,
                      help="Ray cluster to join (with --backend ray); without it a local cluster is started.")(fn)
    fn = click.option("--backend", type=click.Choice(BACKENDS), default="local", show_default=True,
                      help="Where task evaluations run: threads here, or a Ray cluster (pip install -e '.[ray]').")(fn)
    fn = click.option("--jobs", type=click.IntRange(1, 256), default=None,
                      help="Task evaluations at once; above 1 the pairs of a task run concurrently too. Results "
                           "are identical for every value. Default: by model kind (cores for simulated models, "
                           "8 for hosted APIs, 4 for an OpenAI-compatible server).")(fn)
    return fn
