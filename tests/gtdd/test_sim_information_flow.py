"""Information flow of GTDD's simulated doubles: with the harness's reference swapped for a decoy,
the simulated coder and tester behave identically, byte for byte.

Each variant runs in its own Python process with its own cache directory, from the same requests
(built here with the real reference, as the loop builds them). In the decoy process the domain's
`reference_results` (the trusted oracle) and `reference_source` both return decoys once the agents
exist. The simulated coder takes its copy of the reference source when it is constructed -- it edits
that copy to write code, which every report states -- so what this test checks for the coder is that
its decisions (which defects a failure exposes, what it repairs) use only the request: the feedback's
expected replies, the public tests and its own runs. The tester never reads the reference at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gtdd.agents import CodingRequest
from gtdd.domains import get_domain
from gtdd.execution import TraceExecutor
from gtdd.sim import SimCoder

ROOT = Path(__file__).resolve().parents[2]

AGENT_SCRIPT = r'''
import json, sys
import pytest

from gtdd.agents import CodingRequest, TestingRequest
from gtdd.domains import get_domain
from gtdd.domains.base import TraceResult
from gtdd.execution import TraceExecutor
from gtdd.sim import SimCoder, SimTester

decoy, requests_path = sys.argv[1] == "decoy", sys.argv[2]
domain = get_domain("kvstore")
coder = SimCoder("sim:strong", domain, TraceExecutor(domain))
if decoy:
    cls = type(domain)
    cls.reference_results = lambda self, traces: [TraceResult(tuple("DECOY" for _ in t.ops), None) for t in traces]
    cls.reference_source = lambda self: "class Decoy:\n    pass\n"
tester = SimTester("sim:strong", domain)
data = json.load(open(requests_path))
out = {"oracle_probe": [list(r.replies) for r in domain.reference_results(
           [domain.population()[0]])], "modules": [], "generators": []}
for seed in range(6):
    request = CodingRequest(**{**data["coding"], "seed": seed,
                               "counterexamples": tuple(data["coding"]["counterexamples"]),
                               "public_results": tuple(data["coding"]["public_results"])})
    out["modules"].append(coder.write_module(request).module)
for seed in range(3):
    for module in (None, data["coding"]["current_module"]):
        program = tester.write_generator(TestingRequest(
            block=0, round=2, seed=seed, spec=domain.spec(), families=tuple(domain.families), traces=20,
            counterexamples=tuple(data["coding"]["counterexamples"]), module=module))
        out["generators"].append([program.source, program.note])
print(json.dumps(out))
'''


def _requests(tmp_path: Path) -> Path:
    domain = get_domain("kvstore")
    executor = TraceExecutor(domain)
    coder = SimCoder("sim:strong", domain, executor)
    first = coder.write_module(CodingRequest(0, 1, 7, domain.spec(), domain.module_name, None)).module
    traces = list(domain.population()[:200])
    failing = [(t, f) for t, f in zip(traces, executor.failures(first, traces)) if f is not None][:6]
    assert failing, "the first simulated module fails no trace; the test would show nothing"
    shown = [{"id": t.id, "round": 1, "family": t.family, "ops": [dict(op) for op in t.ops],
              "expected": list(f.expected.replies), "observed": list(f.observed.replies),
              "status": f.observed.error or "ok"} for t, f in failing]
    coding = {"block": 0, "round": 2, "seed": 0, "spec": domain.spec(), "module_name": domain.module_name,
              "current_module": first, "counterexamples": shown, "public_results": []}
    path = tmp_path / "requests.json"
    path.write_text(json.dumps({"coding": coding}))
    return path


def _agents(tmp_path: Path, variant: str, requests: Path) -> dict:
    env = {**os.environ, "TESTHELIX_CACHE_DIR": str(tmp_path / f"cache-{variant}"),
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", AGENT_SCRIPT, variant, str(requests)], capture_output=True,
                          text=True, env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.slow  # two fresh Python processes, each running sandboxed traces
def test_a_decoy_reference_leaves_the_simulated_coder_and_tester_unchanged(tmp_path):
    requests = _requests(tmp_path)
    real = _agents(tmp_path, "real", requests)
    decoy = _agents(tmp_path, "decoy", requests)
    # the decoy really replaced the oracle in its process ...
    assert decoy["oracle_probe"] != real["oracle_probe"] and "DECOY" in json.dumps(decoy["oracle_probe"])
    # ... and the doubles did not notice: the same modules and the same generator programs
    assert decoy["modules"] == real["modules"]
    assert decoy["generators"] == real["generators"]
    # the requests gave the coder something to act on: some repair rounds changed its module
    first = json.loads(requests.read_text())["coding"]["current_module"]
    assert any(m != first for m in real["modules"])
