"""Table-driven bad input across the three command lines: every case exits 2 within its time bound
with one message naming the option or field (and usually the value), never a traceback."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testhelix.store.runstore import RunStore

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PACK = "katas"  # the bundled pack, by name
BIN = Path(sys.executable).parent
TIME_BOUND_S = 60
NOT_UTF8 = b'{"agentSteps": 12, "guidance": "caf\xe9"}\n'


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    """The files and folders the cases refer to (as format fields)."""
    d = tmp_path_factory.mktemp("bad")
    files = {}
    for name in ("strategy", "split", "config", "frozen", "csv", "counts"):
        files[name] = d / f"latin1-{name}.{'csv' if name == 'csv' else 'json'}"
        files[name].write_bytes(NOT_UTF8 if name != "csv" else b"task,challenger,baseline\nt\xe91,1,0\n")
    files["folder"] = d / "a-folder"
    files["folder"].mkdir()
    files["file"] = d / "plain.txt"
    files["file"].write_text("not a run\n")
    files["nan_config"] = d / "nan.json"
    files["nan_config"].write_text('{"agent_time_limit_s": NaN}')
    files["huge_workers"] = d / "workers.json"
    files["huge_workers"].write_text(json.dumps({"workers": 10 ** 12}))
    files["helix_run"] = d / "helix-run"
    store = RunStore(files["helix_run"])
    store.record_run("sim:strong/A", "helix", {"model": "sim:strong"})
    store.close()
    files["search_run"] = d / "search-run"
    store = RunStore(files["search_run"])
    store.put_state("meta", {"pack": "p", "model": "sim:strong", "optimizer_model": "sim:strong", "config": {}})
    store.close()
    files["empty_run"] = d / "empty-run"
    RunStore(files["empty_run"]).close()
    files["initial"] = ROOT / "strategies" / "initial.json"
    files["pack"] = PACK
    files["out_under_file"] = files["file"] / "x.json"
    files["bom_csv"] = d / "bom.csv"
    files["bom_csv"].write_bytes(b"\xef\xbb\xbftask, challenger, baseline\nt1, 1, 0\nt2, 1, 1\n")
    return {k: str(v) for k, v in files.items()}


SIM = ["--model", "sim:strong", "--optimizer-model", "sim:strong"]
# (id, program, arguments with {fields} of the fixture, words the message must contain)
CASES = [
    # non-UTF-8 files
    ("strategy validate latin-1", "testhelix", ["strategy", "validate", "{strategy}"], ["FILE", "not UTF-8"]),
    ("run --strategy latin-1", "testhelix", ["run", "--pack", "{pack}", "--split", "all", "--config", "E", "--model",
                                             "sim:strong", "--run", "{folder}/r", "--strategy", "{strategy}"],
     ["--strategy", "not UTF-8"]),
    ("splits check latin-1", "testhelix", ["splits", "check", "{split}", "--pack", "{pack}"], ["SPLIT_FILE", "UTF-8"]),
    ("search --split-file latin-1", "autosaddler", ["search", "--pack", "{pack}", *SIM, "--run", "{folder}/s",
                                                    "--split-file", "{split}"], ["--split-file", "UTF-8"]),
    ("search --settings latin-1", "autosaddler", ["search", "--pack", "{pack}", *SIM, "--run", "{folder}/s",
                                                  "--settings", "{config}"], ["--settings", "UTF-8"]),
    ("export latin-1", "autosaddler", ["export", "{frozen}"], ["FROZEN", "UTF-8"]),
    ("gate --outcomes latin-1", "autosaddler", ["gate", "--outcomes", "{csv}"], ["--outcomes", "UTF-8"]),
    ("gate --challenger latin-1", "autosaddler", ["gate", "--challenger", "{strategy}", "--baseline", "{initial}",
                                                  "--pack", "{pack}", "--model", "sim:strong", "--run", "{folder}/g"],
     ["--challenger", "UTF-8"]),
    ("recorded-audit --counts latin-1", "gtdd", ["recorded-audit", "--counts", "{counts}", "-N", "100",
                                                 "--tolerance", "0.05", "--sample", "10"], ["--counts", "UTF-8"]),
    # a folder where a file is expected, a file where a folder is expected
    ("strategy validate folder", "testhelix", ["strategy", "validate", "{folder}"], ["FILE", "is a folder"]),
    ("export folder", "autosaddler", ["export", "{folder}"], ["FROZEN", "is a folder"]),
    ("gate --outcomes folder", "autosaddler", ["gate", "--outcomes", "{folder}"], ["--outcomes", "is a folder"]),
    ("search --settings folder", "autosaddler", ["search", "--pack", "{pack}", *SIM, "--run", "{folder}/s",
                                                 "--settings", "{folder}"], ["--settings", "is a folder"]),
    ("counts folder", "gtdd", ["recorded-audit", "--counts", "{folder}", "-N", "100", "--tolerance", "0.05",
                               "--sample", "10"], ["--counts", "is a folder"]),
    ("dag on a file", "autosaddler", ["dag", "{file}"], ["RUN_DIR", "is a file"]),
    ("sql on a file", "testhelix", ["sql", "{file}", "SELECT 1"], ["RUN_DIR", "is a file"]),
    ("report on a file", "testhelix", ["report", "{file}"], ["RUN_DIR", "is a file"]),
    ("resume on a file", "autosaddler", ["resume", "{file}"], ["RUN_DIR", "is a file"]),
    ("gtdd report on a file", "gtdd", ["report", "{file}"], ["RUN_DIR", "is a file"]),
    ("search --run a file", "autosaddler", ["search", "--pack", "{pack}", *SIM, "--run", "{file}"],
     ["--run", "is a file"]),
    ("run --pack a file", "testhelix", ["run", "--pack", "{file}", "--split", "all", "--config", "A", "--model",
                                        "sim:strong", "--run", "{folder}/r"], ["--pack", "is a file"]),
    ("dag on a folder without a store", "autosaddler", ["dag", "{folder}"], ["RUN_DIR", "no run store"]),
    # numbers: NaN, infinity, out of bounds
    ("per-trace-timeout nan", "gtdd", ["experiment", "--policies", "public-only", "--blocks", "1", "--run", "{folder}/x",
                                       "--per-trace-timeout", "nan"], ["--per-trace-timeout", "nan"]),
    ("per-trace-timeout inf", "gtdd", ["run", "--policy", "public-only", "--run", "{folder}/x",
                                       "--per-trace-timeout", "inf"], ["--per-trace-timeout", "inf"]),
    ("per-trace-timeout 0", "gtdd", ["run", "--policy", "public-only", "--run", "{folder}/x",
                                     "--per-trace-timeout", "0"], ["--per-trace-timeout"]),
    ("blocks 10^12", "gtdd", ["experiment", "--policies", "public-only", "--blocks", "1000000000000", "--run",
                              "{folder}/x"], ["--blocks", "1000000000000"]),
    ("rounds 0", "gtdd", ["run", "--policy", "public-only", "--rounds", "0", "--run", "{folder}/x"], ["--rounds"]),
    ("run --workers 10^12", "testhelix", ["run", "--pack", "{pack}", "--split", "all", "--config", "A", "--model",
                                          "sim:strong", "--run", "{folder}/r", "--workers", "1000000000000"],
     ["--workers", "1000000000000"]),
    ("evaluate --workers 0", "testhelix", ["evaluate", "--pack", "{pack}", "--split", "all", "--suites", "{folder}",
                                           "--run", "{folder}/e", "--workers", "0"], ["--workers", "0"]),
    ("search config workers 10^12", "autosaddler", ["search", "--pack", "{pack}", *SIM, "--run", "{folder}/s",
                                                    "--settings", "{huge_workers}"], ["workers", "64"]),
    ("search config NaN", "autosaddler", ["search", "--pack", "{pack}", *SIM, "--run", "{folder}/s",
                                          "--settings", "{nan_config}"], ["agent_time_limit_s"]),
    ("splits make negative size", "testhelix", ["splits", "make", "--pack", "{pack}", "--out", "{folder}/s.json",
                                                "--proposal", "-1", "--development", "1", "--release", "1",
                                                "--test", "1"], ["--proposal", "-1"]),
    ("splits make all sizes 0", "testhelix", ["splits", "make", "--pack", "{pack}", "--out", "{folder}/s0.json",
                                              "--proposal", "0", "--development", "0", "--release", "0",
                                              "--test", "0"], ["all sizes are 0"]),
    ("accept-prob exact huge", "gtdd", ["accept-prob", "-N", "1000000000000", "-K", "1000000", "-n", "1000000",
                                        "--method", "exact"], ["--method exact", "1000000"]),
    ("history-bound T 10^9", "gtdd", ["history-bound", "-N", "1000", "--tolerance", "0.05", "--alpha", "0.05",
                                      "-T", "1000000000", "-k", "6"], ["--rounds", "1000000000"]),
    ("probe T 10^6", "gtdd", ["probe", "-N", "100000", "-n", "100", "-m", "2", "-k", "1", "-T", "1000000",
                              "--tolerance", "0.05"], ["--rounds", "1000000"]),
    ("alpha nan", "gtdd", ["audit-size", "-N", "100", "--tolerance", "0.05", "--alpha", "nan"], ["alpha"]),
    ("tolerance inf", "gtdd", ["audit-size", "-N", "100", "--tolerance", "inf", "--alpha", "0.05"], ["tolerance"]),
    # sql is read-only
    ("sql empty", "testhelix", ["sql", "{helix_run}", ""], ["QUERY", "empty"]),
    ("sql blank", "testhelix", ["sql", "{helix_run}", "   ;  "], ["QUERY"]),
    ("sql COPY", "testhelix", ["sql", "{helix_run}", "COPY runs TO '{folder}/leak.csv'"], ["COPY", "read-only"]),
    ("sql EXPORT", "testhelix", ["sql", "{helix_run}", "EXPORT DATABASE '{folder}/leak'"], ["EXPORT", "read-only"]),
    ("sql ATTACH", "testhelix", ["sql", "{helix_run}", "ATTACH '{folder}/other.db'"], ["ATTACH", "read-only"]),
    ("sql INSTALL", "testhelix", ["sql", "{helix_run}", "INSTALL httpfs"], ["read-only"]),
    ("sql LOAD", "testhelix", ["sql", "{helix_run}", "LOAD httpfs"], ["read-only"]),
    ("sql SET", "testhelix", ["sql", "{helix_run}", "SET enable_external_access = true"], ["read-only"]),
    ("sql read_csv", "testhelix", ["sql", "{helix_run}", "SELECT * FROM read_csv('/etc/hostname')"],
     ["disabled"]),
    ("sql second statement", "testhelix", ["sql", "{helix_run}", "SELECT 1; COPY runs TO '{folder}/l.csv'"],
     ["COPY"]),
    ("sql does not parse", "testhelix", ["sql", "{helix_run}", "SELEKT 1"], ["QUERY"]),
    # outputs
    ("--out under a file", "testhelix", ["strategy", "schema", "--out", "{out_under_file}"], ["--out", "is a file"]),
    ("--out is a folder", "autosaddler", ["export", "{initial}", "--out", "{folder}"], ["--out", "is a folder"]),
    ("dag --png under a file", "autosaddler", ["dag", "{search_run}", "--png", "{out_under_file}"], ["--png"]),
    # misleading refusals of the issue
    ("missing pack", "autosaddler", ["search", "--pack", "{folder}/nopack", *SIM, "--run", "{folder}/s"],
     ["--pack", "no such folder"]),
    ("missing pack (run)", "testhelix", ["run", "--pack", "{folder}/nopack", "--split", "development", "--config",
                                         "A", "--model", "sim:strong", "--run", "{folder}/r"], ["--pack", "no such"]),
    ("malformed compatible URL", "testhelix", ["run", "--pack", "{pack}", "--split", "all", "--config", "A",
                                               "--model", "openai-compatible:x@notaurl", "--run", "{folder}/r"],
     ["malformed", "http"]),
    ("unknown model", "autosaddler", ["search", "--pack", "{pack}", "--model", "nope:x", "--optimizer-model",
                                      "sim:strong", "--run", "{folder}/s"], ["unknown model", "nope:x"]),
    ("gate --outcomes with --challenger", "autosaddler", ["gate", "--outcomes", "{bom_csv}", "--challenger",
                                                          "{initial}"], ["--challenger", "ignored"]),
    ("dag on a helix run", "autosaddler", ["dag", "{helix_run}"], ["autosaddler dag", "strategy search"]),
    ("freeze on a helix run", "autosaddler", ["freeze", "{helix_run}", "--out", "{folder}/f.json"],
     ["strategy search"]),
    ("dag on an empty store", "autosaddler", ["dag", "{empty_run}"], ["empty store"]),
    ("resume on a helix run", "autosaddler", ["resume", "{helix_run}"], ["strategy search"]),
    ("search into a helix run", "autosaddler", ["search", "--pack", "{pack}", *SIM, "--run", "{helix_run}"],
     ["testhelix run"]),
    ("gtdd report on a search run", "gtdd", ["report", "{search_run}"], ["GTDD experiment"]),
    ("gtdd experiment into a search run", "gtdd", ["experiment", "--policies", "public-only", "--blocks", "1", "--run",
                                                   "{search_run}"], ["strategy search"]),
    ("testhelix report on a search run", "testhelix", ["report", "{search_run}"], ["strategy search"]),
    ("testhelix run into a search run", "testhelix", ["run", "--pack", "{pack}", "--split", "all", "--config", "A",
                                                      "--model", "sim:strong", "--run", "{search_run}"],
     ["strategy search"]),
    ("report --pack missing", "testhelix", ["report", "{helix_run}", "--pack", "{folder}/nopack"],
     ["--pack", "no such folder"]),
    ("export an unfrozen file", "autosaddler", ["export", "{initial}"], ["not a frozen strategy"]),
]


@pytest.mark.parametrize("name,program,args,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, program, args, words, w):
    argv = [str(BIN / program), *(a.format(**w) for a in args)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=TIME_BOUND_S,
                       env={**os.environ, "COLUMNS": "300"})
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-1000:])
    assert "Traceback" not in r.stderr + r.stdout
    message = " ".join(r.stderr.split())
    for word in words:
        assert word.format(**w) in message, message


def test_spreadsheet_csv_with_bom_and_spaces_is_accepted(w):
    r = subprocess.run([str(BIN / "autosaddler"), "gate", "--outcomes", w["bom_csv"], "--json"], capture_output=True,
                       text=True, timeout=TIME_BOUND_S)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n"] == 2
