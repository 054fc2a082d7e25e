"""Bad input of issue #35 across the three command lines, in one process (the real entry points,
`main(argv)`, so a UserError is rendered exactly as on the command line): every case exits 2 with
one message, no traceback, no hang, and writes nothing (the folder the case may write into is
compared before and after)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from autosaddler.cli import main as autosaddler_main
from gtdd.cli import main as gtdd_main
from testhelix.commands.cli import main as th_main
from testhelix.core.paths import strategies_dir
from testhelix.strategy.model import initial_strategy

MAINS = {"testhelix": th_main, "autosaddler": autosaddler_main, "gtdd": gtdd_main}
DIGITS = "9" * 5000
INITIAL = json.loads((strategies_dir() / "initial.json").read_text())
SIM = ["--model", "sim:strong", "--optimizer-model", "sim:strong"]


def frozen(strategy: dict, digest: object = "auto") -> str:
    doc: dict[str, object] = {"strategy": strategy, "provenance": {"node": "n1"}}
    if digest == "auto":
        digest = initial_strategy().content_hash() if strategy == INITIAL else "0" * 64
    if digest is not None:
        doc["hash"] = digest
    return json.dumps(doc)


FILES: dict[str, str | bytes] = {
    "int.json": '{"agentSteps": ' + DIGITS + "}",
    "deep.json": "[" * 5000 + "]" * 5000,
    "deep_obj.json": '{"a":' * 3000 + "1" + "}" * 3000,
    "int.toml": f"seed = {DIGITS}\n",
    "deep.toml": "workers = " + "[" * 5000 + "]" * 5000 + "\n",
    "frozen_int.json": frozen(INITIAL, None)[:-1] + ', "hash": ' + DIGITS + "}",
    "counts_int.json": f"[[{DIGITS}]]",
    "counts_deep.json": "[" * 5000 + "]" * 5000,
    "split_int.json": '{"pack": "katas", "seed": ' + DIGITS + "}",
    "field.csv": "task,challenger,baseline\n" + "t" * 200_000 + ",1,0\n",
    "nul.csv": "task,challenger,baseline\nt\x001,1,0\nt2,0,1\n",
    "dup_header.csv": "task,task,challenger,baseline\nt1,t1,1,0\n",
    "bool_steps.json": json.dumps(INITIAL | {"repairSteps": True}),
    "str_steps.json": json.dumps(INITIAL | {"agentSteps": "12"}),
    "frozen_bad_hash.json": frozen(INITIAL, "0" * 64),
    "frozen_no_hash.json": frozen(INITIAL, None),
    "train_dev.json": json.dumps({"proposal_split": "development"}),
    "train_release.toml": 'proposal_split = "release"\n',
    "train_test.json": json.dumps({"proposal_split": "test"}),
    "rank_release.json": json.dumps({"development_split": "release"}),
    "latin1.json": b'{"guidance": "caf\xe9"}',
}


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounded")
    out = {}
    for name, text in FILES.items():
        path = d / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        out[name.replace(".", "_")] = str(path)
    for name, toml in (("pack_meta5", "metadata = 5\n"), ("pack_id17", "[metadata]\nid = 17\n"),
                       ("pack_deep", "[metadata]\nid = " + "[" * 3000 + "]" * 3000 + "\n")):
        (d / name / "t1").mkdir(parents=True)
        (d / name / "t1" / "task.toml").write_text(toml)
        out[name] = str(d / name)
    # An empty proposal split of the bundled pack (a real, checked split file).
    rc = _call("testhelix", ["splits", "make", "--pack", "katas", "--proposal", "0", "--development", "4",
                             "--release", "4", "--test", "4", "--out", str(d / "empty_proposal.json")])
    assert rc == 0
    out["empty_proposal"] = str(d / "empty_proposal.json")
    # A run folder whose name is not UTF-8 (DuckDB cannot open such a path), holding a real store.
    from testhelix.store.runstore import RunStore

    store = RunStore(d / "helix-run")
    store.record_run("sim:strong/A", "helix", {"model": "sim:strong"})
    store.close()
    latin = os.fsdecode(os.fsencode(d) + b"/run-caf\xe9")
    os.mkdir(latin)
    shutil.copyfile(d / "helix-run" / "run.duckdb", os.path.join(latin, "run.duckdb"))
    out["latin_run"] = latin
    out["initial"] = str(strategies_dir() / "initial.json")
    out["new"] = str(d / "new")  # where a command that wrongly went ahead would write
    out["dir"] = str(d)
    return out


def _call(program: str, argv: list[str]) -> int:
    try:
        MAINS[program](argv)
    except SystemExit as done:
        return int(done.code or 0)
    return 0


# (id, program, arguments with {fields}, words the message must contain)
CASES = [
    # integers longer than Python's 4300-digit limit, and nesting past the recursion limit
    ("validate int", "testhelix", ["strategy", "validate", "{int_json}"], ["int.json", "5000 digits", "limit"]),
    ("validate deep", "testhelix", ["strategy", "validate", "{deep_json}"], ["deep.json", "nested", "64"]),
    ("validate deep object", "testhelix", ["strategy", "validate", "{deep_obj_json}"], ["deep_obj.json", "nested"]),
    ("search --settings json int", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                 "--settings", "{int_json}"], ["int.json", "digits"]),
    ("search --settings toml int", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                 "--settings", "{int_toml}"], ["int.toml", "line 1", "digits"]),
    ("search --settings toml deep", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                  "--settings", "{deep_toml}"], ["deep.toml", "nested"]),
    ("export int", "autosaddler", ["export", "{frozen_int_json}"], ["frozen_int.json", "digits"]),
    ("gate --challenger int", "autosaddler", ["gate", "--challenger", "{int_json}", "--baseline", "initial",
                                              "--pack", "katas", "--model", "sim:strong", "--run", "{new}"],
     ["int.json", "digits"]),
    ("gate --challenger deep", "autosaddler", ["gate", "--challenger", "{deep_json}", "--baseline", "initial",
                                               "--pack", "katas", "--model", "sim:strong", "--run", "{new}"],
     ["deep.json", "nested"]),
    ("run --strategy int", "testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "E", "--model",
                                         "sim:strong", "--run", "{new}", "--strategy", "{int_json}"],
     ["int.json", "digits"]),
    ("splits check int", "testhelix", ["splits", "check", "{split_int_json}", "--pack", "katas"],
     ["split_int.json", "digits"]),
    ("recorded-audit --counts int", "gtdd", ["recorded-audit", "--counts", "{counts_int_json}", "-N", "100",
                                             "--tolerance", "0.05", "--sample", "10"], ["counts_int.json", "digits"]),
    ("recorded-audit --counts deep", "gtdd", ["recorded-audit", "--counts", "{counts_deep_json}", "-N", "100",
                                              "--tolerance", "0.05", "--sample", "10"], ["counts_deep.json", "nested"]),
    ("splits make task.toml deep", "testhelix", ["splits", "make", "--pack", "{pack_deep}", "--out", "{new}.json"],
     ["task.toml", "nested"]),
    # CSV: a field past the csv module's limit, a NUL in a task id, a duplicated column
    ("gate --outcomes huge field", "autosaddler", ["gate", "--outcomes", "{field_csv}"], ["field.csv", "line 2"]),
    ("gate --outcomes NUL", "autosaddler", ["gate", "--outcomes", "{nul_csv}"], ["nul.csv", "NUL", "line 2"]),
    ("gate --outcomes two task columns", "autosaddler", ["gate", "--outcomes", "{dup_header_csv}"],
     ["dup_header.csv", "'task'", "more than once"]),
    # strict strategy types and the frozen hash
    ("validate repairSteps true", "testhelix", ["strategy", "validate", "{bool_steps_json}"],
     ["repairSteps", "integer"]),
    ("validate agentSteps '12'", "testhelix", ["strategy", "validate", "{str_steps_json}"], ["agentSteps", "integer"]),
    ("validate frozen bad hash", "testhelix", ["strategy", "validate", "{frozen_bad_hash_json}"], ["hash"]),
    ("validate frozen no hash", "testhelix", ["strategy", "validate", "{frozen_no_hash_json}"], ["hash", "None"]),
    # safe search and gate setups
    ("search trains on development", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                     "--settings", "{train_dev_json}"],
     ["proposal_split", "development"]),
    ("search trains on release", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                 "--settings", "{train_release_toml}"], ["proposal_split", "release"]),
    ("search trains on test", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                              "--settings", "{train_test_json}"], ["proposal_split", "test"]),
    ("search ranks on release", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                "--settings", "{rank_release_json}"], ["development_split", "release"]),
    ("search empty proposal split", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                    "--split-file", "{empty_proposal}"], ["proposal", "empty"]),
    ("gate unfrozen challenger", "autosaddler", ["gate", "--challenger", "initial", "--baseline", "initial",
                                                 "--pack", "katas", "--model", "sim:strong", "--run", "{new}"],
     ["not a frozen strategy", "--allow-unfrozen-challenger"]),
    # options a combination would ignore; plug-ins, URLs and numbers checked when given
    ("run --strategy without E", "testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "A", "--config",
                                               "C", "--model", "sim:strong", "--run", "{new}", "--strategy",
                                               "initial"], ["--strategy", "--config A --config C", "ignored"]),
    ("--executor os:getcwd", "testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model",
                                           "sim:strong", "--run", "{new}", "--executor", "os:getcwd"],
     ["--executor", "os:getcwd", "not an executor factory"]),
    ("--sandbox os:getenv", "testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model",
                                          "sim:strong", "--run", "{new}", "--sandbox", "os:getenv"],
     ["--sandbox", "os:getenv"]),
    ("model URL bracket", "testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model",
                                        "openai-compatible:m@http://[::1/v1", "--run", "{new}"], ["IPv6", "[::1"]),
    ("model URL port 99999", "testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model",
                                           "openai-compatible:m@http://127.0.0.1:99999/v1", "--run", "{new}"],
     ["Port out of range", "99999"]),
    ("serve stall -1", "testhelix", ["serve", "--model", "sim:strong", "--fault", "stall:seconds=-1"],
     ["seconds", "-1"]),
    ("serve status 99999", "testhelix", ["serve", "--model", "sim:strong", "--fault", "99999"], ["code", "99999"]),
    ("splits make metadata = 5", "testhelix", ["splits", "make", "--pack", "{pack_meta5}", "--out", "{new}.json"],
     ["task.toml", "metadata", "table"]),
    ("splits make id = 17", "testhelix", ["splits", "make", "--pack", "{pack_id17}", "--out", "{new}.json"],
     ["task.toml", "metadata.id", "17"]),
    ("per-trace-timeout 1e-300", "gtdd", ["experiment", "--policies", "public-only", "--blocks", "1", "--run", "{new}",
                                          "--per-trace-timeout", "1e-300"], ["--per-trace-timeout", "1e-300"]),
    ("audit-size alpha 1e-999999999", "gtdd", ["audit-size", "-N", "1000", "--tolerance", "0.05", "--alpha",
                                               "1e-999999999"], ["alpha", "precision"]),
    ("audit-size tolerance 1e-999999999", "gtdd", ["audit-size", "-N", "1000", "--tolerance", "1e-999999999",
                                                   "--alpha", "0.05"], ["tolerance", "precision"]),
    ("audit-size alpha 50 digits", "gtdd", ["audit-size", "-N", "1000", "--tolerance", "0.05", "--alpha",
                                            "0." + "1" * 50], ["alpha", "precision"]),
    # a run folder whose name is not UTF-8
    ("sql on a latin-1 folder", "testhelix", ["sql", "{latin_run}", "SELECT 1"], ["not UTF-8", "run-caf"]),
    ("report on a latin-1 folder", "testhelix", ["report", "{latin_run}"], ["not UTF-8"]),
    ("dag on a latin-1 folder", "autosaddler", ["dag", "{latin_run}"], ["not UTF-8"]),
    ("gtdd report on a latin-1 folder", "gtdd", ["report", "{latin_run}"], ["not UTF-8"]),
    ("run into a latin-1 folder", "testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "A",
                                                "--model", "sim:strong", "--run", "{latin_run}"], ["not UTF-8"]),
    # every refusal names its file
    ("not UTF-8 names the file", "autosaddler", ["search", "--pack", "katas", *SIM, "--run", "{new}",
                                                 "--settings", "{latin1_json}"], ["latin1.json", "UTF-8"]),
]
NOTES = ("pack 'katas': using the bundled pack", "split file", "strategy 'initial':",
         "Usage: ", "Try '")  # notes on bundled names, and click's usage lines above its one error line


def _tree(root: str) -> set[str]:
    return {os.path.join(p, f) for p, dirs, files in os.walk(root) for f in files + dirs}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name,program,args,words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_with_one_message(name, program, args, words, w, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    before = _tree(w["dir"])
    code = _call(program, [a.format(**w) for a in args])
    out = capsys.readouterr()
    assert code == 2, (name, code, out.out[-500:], out.err[-1500:])
    assert "Traceback" not in out.err + out.out
    lines = [line for line in out.err.splitlines() if line.strip() and not line.startswith(NOTES)]
    heads = [line for line in lines if not line.startswith(" ")]
    assert len(heads) == 1, lines  # one message (a list of problems under it is indented)
    message = " ".join(" ".join(lines).split())
    for word in words:
        assert word.format(**w) in message, message
    assert _tree(w["dir"]) == before, "a refused command wrote files"


def test_the_bounded_reader_accepts_what_real_inputs_hold(tmp_path):
    from testhelix.core.readers import read_csv, read_json, read_toml

    assert read_json(strategies_dir() / "initial.json") == INITIAL
    (tmp_path / "c.toml").write_text('seed = 12345678901234567890\nname = "[[[[ not nesting ]]]]"\n')
    assert read_toml(tmp_path / "c.toml")["seed"] == 12345678901234567890
    (tmp_path / "o.csv").write_bytes(b"\xef\xbb\xbftask, challenger, baseline\nt1, 1, 0\n\n")
    header, rows = read_csv(tmp_path / "o.csv", required=("task",), skipinitialspace=True)
    assert header == ["task", "challenger", "baseline"] and rows == [(2, {"task": "t1", "challenger": "1",
                                                                           "baseline": "0"})]
