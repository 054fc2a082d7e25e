"""Speed of the kvstore domain: scoring a candidate on the population, against a Redis peer.

Measured in one run, on the same 2,000 population traces:
  reference   the reference Store run in-process (what the evaluator does for expected replies)
  candidate   a defective copy of the reference scored through the isolated runner (one sandboxed
              subprocess for all traces, JSON over a pipe): population_seconds is this wall time,
              the figure the "under 1 s on one core" goal is about
  peer        fakeredis (in-process, default) or a real redis-server (--peer redis, loopback) running
              the TICK-free prefix of every trace, the part whose semantics Redis shares; replies are
              compared with the reference's and the agreeing count printed
The peer ratio is reference speed / peer speed on the same shared prefixes.

Run: /work/venv/bin/python bench/kvstore.py [--peer fakeredis|redis] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from gtdd.domains.base import TraceResult, first_divergence
from gtdd.domains.kvstore import DOMAIN, run_reference
from gtdd.domains.kvstore.defects import apply_defects
from gtdd.domains.kvstore.redis_peer import raw_client, replay, reset, shared_prefix, start_redis
from gtdd.execution import TraceExecutor

CANDIDATE_DEFECTS = ["strings-append-length", "lists-lindex-negative", "tx-watch-empty-list"]


def best(seconds: list[float]) -> float:
    return min(seconds)


def time_reference(op_lists: list[list[dict]], repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for ops in op_lists:
            run_reference(ops)
        runs.append(time.perf_counter() - start)
    return best(runs)


def time_candidate(source: str, repeats: int) -> tuple[float, int]:
    population = DOMAIN.population()
    expected = DOMAIN.reference_results(population)
    runs, failing, executor = [], 0, TraceExecutor(DOMAIN)
    for _ in range(repeats):
        start = time.perf_counter()
        got = executor.run(source, population)
        runs.append(time.perf_counter() - start)
        failing = sum(first_divergence(e, g) is not None for e, g in zip(expected, got))
    return best(runs), failing


def peer_client(kind: str) -> tuple[Any, Callable[[], None]]:
    if kind == "redis":
        server = start_redis()
        return server.client(), server.stop
    import fakeredis

    client = raw_client(fakeredis.FakeRedis(decode_responses=True, protocol=2, single_connection_client=True))
    return client, lambda: None


def time_peer(kind: str, op_lists: list[list[dict]], repeats: int) -> tuple[float, int]:
    client, stop = peer_client(kind)
    try:
        runs, agreeing = [], 0
        for _ in range(repeats):
            agreeing = 0
            start = time.perf_counter()
            for ops in op_lists:
                reset(client)
                got = TraceResult(tuple(replay(client, ops)), None)
                agreeing += first_divergence(run_reference(ops), got) is None  # excluded below
            runs.append(time.perf_counter() - start)
        # The comparison ran inside the timed loop; time it alone and take it out again.
        start = time.perf_counter()
        for ops in op_lists:
            run_reference(ops)
        compare = time.perf_counter() - start
        return max(best(runs) - compare, 1e-9), agreeing
    finally:
        stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", choices=("fakeredis", "redis"), default="fakeredis")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    population = DOMAIN.population()
    all_ops = [list(t.ops) for t in population]
    shared = [p for p, _ in (shared_prefix(t.ops) for t in population) if p]
    n_ops = sum(len(o) for o in all_ops)

    ref_s = time_reference(all_ops, args.repeats)
    print(f"reference  in-process   {len(all_ops)} traces ({n_ops} ops): {ref_s:.3f}s "
          f"= {len(all_ops) / ref_s:,.0f} traces/s")

    candidate = apply_defects(DOMAIN.reference_source(), CANDIDATE_DEFECTS)
    cand_s, failing = time_candidate(candidate, args.repeats)
    print(f"candidate  isolated     {len(all_ops)} traces: {cand_s:.3f}s = {len(all_ops) / cand_s:,.0f} traces/s "
          f"({failing} failing; defects {', '.join(CANDIDATE_DEFECTS)})")
    clean_s, clean_failing = time_candidate(DOMAIN.reference_source(), 1)
    print(f"reference  isolated     {len(all_ops)} traces: {clean_s:.3f}s ({clean_failing} failing)")

    shared_ops = sum(len(o) for o in shared)
    ref_shared_s = time_reference(shared, args.repeats)
    peer_s, agreeing = time_peer(args.peer, shared, args.repeats)
    print(f"shared subset (TICK-free prefixes): {len(shared)} traces, {shared_ops} ops")
    print(f"  reference in-process: {len(shared) / ref_shared_s:,.0f} traces/s")
    print(f"  {args.peer}: {len(shared) / peer_s:,.0f} traces/s; {agreeing}/{len(shared)} traces agree "
          f"with the reference")
    print(f"  ratio reference/{args.peer} = {peer_s / ref_shared_s:.1f}x")
    print(f"population_seconds={cand_s:.3f} reference_traces_per_s={len(all_ops) / ref_s:.0f} "
          f"peer_traces_per_s={len(shared) / peer_s:.0f}")


if __name__ == "__main__":
    main()
