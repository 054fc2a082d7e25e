"""The judge learns nothing but behaviour (issue 28): a canary scan of everything a job can read,
and label oracles for each route the last attack used. Each route is closed: an oracle suite
passes on every program (it learned nothing), so it scores S=0; legitimate suites keep their scores.

Suites are written here as text; see tests/fixtures/hostile2/ for the earlier round's attacks."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from testhelix.core.bundled_data import bundled_pack, bundled_packs, manifest_path
from testhelix.core.digest import tree_sha256
from testhelix.execution.executor import TRUSTED_UIDS, UNTRUSTED_UIDS, ForkServerExecutor
from testhelix.execution.outcome import Limits
from testhelix.execution.sandbox import namespaces_available
from testhelix.execution.workspace import force_rmtree
from testhelix.prism.evaluation import evaluate_task
from testhelix.tasks.task import load_task, panel_programs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAMP = FIXTURES / "tasks" / "pack" / "fx-clamp-m01"
LIMITS = Limits(wall_s=60, cpu_s=60, memory_mb=512, fsize_mb=16, nofile=256, nproc=64, output_bytes=20000)

needs_ns = pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare (namespaced sandbox)")
pytestmark = [needs_ns, pytest.mark.slow]


def _suite(root: Path, name: str, files: dict[str, str]) -> Path:
    suite = root / name
    suite.mkdir(parents=True)
    for rel, text in files.items():
        (suite / rel).write_text(text)
    return suite


def _canary_task(dest: Path, mark: str) -> Path:
    """fx-clamp-m01 with a canary in every program, the manifest and the trusted tests."""
    task = dest / CLAMP.name
    shutil.copytree(CLAMP, task)
    manifest = json.loads((task / "panel" / "manifest.json").read_text())
    for c in manifest["candidates"]:
        init = task / c["artifact"] / "clampy" / "__init__.py"
        init.write_text(init.read_text() + f"\nCANARY = '{mark}-{c['id']}'\n")
        c["sha256"] = tree_sha256(task / c["artifact"])
        c["provenance"] += f" {mark}-manifest"
    init = task / "environment" / "clampy" / "__init__.py"
    init.write_text(init.read_text() + f"\nCANARY = '{mark}-initial'\n")
    manifest["initial"]["sha256"] = tree_sha256(task / "environment")
    (task / "panel" / "manifest.json").write_text(json.dumps(manifest, indent=2))
    for t in (task / "tests").glob("test_*.py"):
        t.write_text(f"# {mark}-trusted\n" + t.read_text())
    return task


CANARY_SCAN = r'''
import os, stat, sys
import clampy

MARK = {mark!r}[::-1]  # written reversed: the suite's own text holds no canary
OWN = getattr(clampy, "CANARY", "")
BUNDLED = [b[::-1] for b in {bundled!r}]  # file names and the archive digest of the bundled pack
STAGING = '-msirp-xilehtset'[::-1]  # the executor's staging folders
SKIP_TOP = ("/proc", "/sys", "/dev")
SYSTEM = ("/usr/lib", "/usr/share", "/usr/include", "/usr/libexec", {base!r})
# The panel run reads names everywhere and contents outside the Python installation; the agent's
# run reads the installation's contents too (slower, so once).
NAMES_ONLY = () if {full!r} else {prefixes!r}


def _found(text, where, hits):
    start = 0
    while True:
        i = text.find(MARK, start)
        if i < 0:
            break
        word = text[i:i + 80].split("'")[0].split()[0]
        if word != OWN:
            hits.append((where, word))
        start = i + 1
    for b in BUNDLED:
        if b in text:
            hits.append((where, b))
    if STAGING in text:
        hits.append((where, "staging folder"))


def _walk(hits):
    files = 0
    stack = ["/"]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if d == "/" and e.path in SKIP_TOP:
                continue
            _found(e.path, "name", hits)
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(e.path)
            elif stat.S_ISREG(st.st_mode) and st.st_size < 256 * 1024 and not e.path.startswith(SYSTEM) \
                    and not e.path.startswith(NAMES_ONLY) and not e.name.endswith((".so", ".pyc")):
                try:
                    with open(e.path, "rb") as f:
                        _found(f.read().decode("latin-1"), e.path, hits)
                    files += 1
                except OSError:
                    pass
    return files


def test_nothing_hidden_is_readable():
    hits = []
    files = _walk(hits)
    for name in os.listdir("/proc/self"):
        try:
            with open("/proc/self/" + name, "rb") as f:
                _found(f.read(1 << 20).decode("latin-1"), "/proc/self/" + name, hits)
        except OSError:
            pass
    for key in ("/proc/keys", "/proc/key-users"):
        try:
            _found(open(key).read(), key, hits)
        except OSError:
            pass
    _found(repr(dict(os.environ)), "environment", hits)
    _found(repr(sys.path), "sys.path", hits)
    assert files > (100 if not NAMES_ONLY else 0)  # the scan did read the installation
    assert not hits, hits[:20]
'''


@pytest.fixture(scope="module")
def mark():
    return "CANARY" + secrets.token_hex(6)


@pytest.fixture(scope="module")
def katas() -> Path:
    return bundled_pack("katas")  # unpacked into the ordinary cache, before `ex` moves it


@pytest.fixture(scope="module")
def ex(mark, katas):
    """One pool for the module (two servers: jobs run in parallel). Started with project data (a
    pack cache and a release ledger holding a canary task) under a folder the sandbox mounts."""
    hidden_root = Path(tempfile.mkdtemp(prefix="th-data-", dir=sys.prefix))
    saved = {k: os.environ.get(k) for k in ("TESTHELIX_CACHE_DIR", "AUTOSADDLER_DATA_DIR")}
    try:
        for name, env in (("cache", "TESTHELIX_CACHE_DIR"), ("ledger", "AUTOSADDLER_DATA_DIR")):
            _canary_task(hidden_root / name / mark, mark)  # the mark in a file name too
            os.environ[env] = str(hidden_root / name)
        with ForkServerExecutor(workers=2, sandbox="namespaced") as executor:
            yield executor
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(hidden_root, ignore_errors=True)


def test_canary_scan_finds_nothing(ex, mark, tmp_path):
    katas = bundled_packs()["katas"]
    bundled = [katas.archive_sha256, katas.archive, "katas-src", manifest_path().name]
    task = load_task(_canary_task(tmp_path / "pack", mark))
    base = sys.base_prefix if not sys.base_prefix.startswith("/usr") else "/nonexistent"

    def scan(full: bool) -> Path:
        text = CANARY_SCAN.format(mark=mark[::-1], bundled=[b[::-1] for b in bundled], base=base, full=full,
                                  prefixes=(sys.prefix, os.path.realpath(sys.prefix)))
        return _suite(tmp_path, f"scan-{full}", {"test_scan.py": text})

    res = evaluate_task(ex, task, scan(full=False))
    assert all(s == "pass" for s in res.statuses().values()), res.outcomes
    assert (res.indicators.F, res.indicators.S) == (False, False)
    # The agent's run_tests: the same sandbox (every panel tree is staged by now), and the output
    # the agent would read.
    agent = ex.run(scan(full=True), task.initial_dir, Limits(wall_s=170, cpu_s=170, traceback="auto"))
    assert agent.status == "pass", agent.output[-3000:]
    assert mark not in agent.output


ORACLE = r'''
import ctypes, os, socket, sys


def test_no_route_tells_anything():
    seen = []
    # archive lookup: the project's data in the mounted installation
    for p in sys.path:
        for sub in ("testhelix/_data", "testhelix"):
            if os.path.isdir(os.path.join(p, sub)) and os.listdir(os.path.join(p, sub)):
                seen.append("project data at " + os.path.join(p, sub))
    # position from the cgroup name
    cg = open("/proc/self/cgroup").read()
    if any(line.rsplit(":", 1)[-1] != "/" for line in cg.splitlines()):
        seen.append("cgroup path " + cg)
    # copy order from timestamps: every cached file carries one fixed time
    times = {os.lstat(os.path.join(d, f)).st_mtime for d, _, fs in os.walk("/workspace") for f in fs
             if "__pycache__" not in d and not d.startswith("/workspace/.home")}
    if len(times) > 1:
        seen.append("timestamps %s" % sorted(times)[:3])
    libc = ctypes.CDLL(None, use_errno=True)
    # keyrings: publish for a later job (add_key) and harvest (keyctl, /proc/keys)
    if libc.syscall(248, b"user", b"prism-oracle", b"label", 5, -4) >= 0:
        seen.append("add_key works")
    try:
        if "prism-oracle" in open("/proc/keys").read():
            seen.append("a published key")
    except OSError:
        pass
    # io_uring
    if libc.syscall(425, 4, ctypes.create_string_buffer(120)) >= 0:
        seen.append("io_uring works")
    # unix datagram sendto(path) from an unbound socket
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.sendto(b"x", DGRAM_PATH)
        seen.append("datagram sent")
    except OSError:
        pass
    assert not seen, seen
'''


def _dgram_listener(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(path))
    s.settimeout(0)
    return s


def test_label_oracles_learn_nothing(ex, katas, tmp_path):
    """One suite tries each route on every program of a bundled kata; it learns nothing anywhere,
    so it passes everywhere (S=0). A second evaluation harvests nothing the first published."""
    task = load_task(katas / "katas-lru_cache-m01")
    dgram = Path(sys.prefix) / f"prism-oracle-{os.getpid()}.sock"  # a mounted, read-only folder
    listener = _dgram_listener(dgram)
    try:
        suite = _suite(tmp_path, "oracle", {"test_oracle.py": ORACLE.replace("DGRAM_PATH", repr(str(dgram)))})
        first = evaluate_task(ex, task, suite)
        (suite / "test_again.py").write_text("from test_oracle import test_no_route_tells_anything as test_again\n")
        second = evaluate_task(ex, task, suite)  # another evaluation, another suite digest
        with pytest.raises(BlockingIOError):
            listener.recv(16)
    finally:
        listener.close()
        dgram.unlink()
    for res in (first, second):
        assert all(s == "pass" for s in res.statuses().values()), res.outcomes
        assert (res.indicators.F, res.indicators.S) == (False, False)
    # The order came from a secret, not from the task and the suite: two evaluations, two tokens.
    assert first.panel_order is not None and second.panel_order is not None
    assert first.panel_order.token != second.panel_order.token
    assert sorted(first.panel_order.run_order) == sorted(p[0] for p in panel_programs(task))


UID_PROBE = "import os\n\ndef test_uid():\n    assert False, 'uid=%d' % os.getuid()\n"


def test_jobs_run_under_their_own_uids_apart_from_the_trusted_pool(ex, tmp_path):
    suite = _suite(tmp_path, "uid", {"test_uid.py": UID_PROBE})
    untrusted = ex.run_many([(suite, CLAMP / "solution" / "program")]
                            + [(suite, CLAMP / "panel" / n) for n in ("alt1", "alt2", "inv-lo1")], LIMITS)
    trusted = ForkServerExecutor(workers=1, sandbox="namespaced", trusted=True)  # what ex.trusted() makes
    with trusted:
        trusted_out = trusted.run(suite, CLAMP / "solution" / "program", LIMITS)

    def uid(out) -> int:
        return int(re.findall(r"uid=(\d+)", out.output)[0])

    uids = [uid(o) for o in untrusted]
    assert len(set(uids)) == len(uids)  # one per job
    assert all(UNTRUSTED_UIDS[0] <= u < sum(UNTRUSTED_UIDS) for u in uids)
    assert TRUSTED_UIDS[0] <= uid(trusted_out) < sum(TRUSTED_UIDS)
    assert ex.trusted().trusted_pool and not ex.trusted_pool


HTTP_SUITE = r'''
import json, threading, urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

from clampy import clamp


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        x, lo, hi = (int(v) for v in self.path.strip("/").split("/"))
        body = json.dumps(clamp(x, lo, hi)).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_clamp_over_http():
    server = HTTPServer(("127.0.0.1", 5000), Handler)  # a fixed port, as such suites often use
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        import time
        time.sleep(0.3)  # parallel jobs hold the port at the same time
        get = lambda path: json.loads(urllib.request.urlopen("http://127.0.0.1:5000" + path, timeout=5).read())
        assert get("/3/0/5") == 3
        assert get("/10/0/5") == 5
        assert get("/-4/0/5") == 0
    finally:
        server.shutdown()
'''


def _plain_pytest(suite: Path, program: Path, tmp: Path) -> str:
    work = tmp / secrets.token_hex(4)
    shutil.copytree(program, work)
    shutil.copytree(suite, work / "suite")
    rc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"], cwd=work,
                        capture_output=True, timeout=120).returncode
    return "pass" if rc == 0 else "fail"


def test_legitimate_suites_keep_their_scores(ex, katas, tmp_path):
    task = load_task(CLAMP)
    http = _suite(tmp_path, "http", {"test_http.py": HTTP_SUITE})
    sampled = [load_task(katas / t) for t in ("katas-lru_cache-m01", "katas-interval_merge-m04")]
    res = evaluate_task(ex, task, http)
    trusted = [evaluate_task(ex, t, t.trusted_tests_dir) for t in sampled]
    plain = {pid: _plain_pytest(http, tree, tmp_path) for pid, _, _, tree in panel_programs(task)}
    assert res.statuses() == plain
    for t, judged in zip(sampled, trusted):
        assert judged.indicators.S, (t.id, judged.outcomes)


def _good_suite(dest: Path, task_id: str) -> Path:
    shutil.copytree(FIXTURES / "tasks" / "suites" / "good" / task_id, dest)
    return dest


def test_suite_shapes_are_checked_before_the_host_touches_them(ex, tmp_path):
    """Deep nests, sparse files and non-UTF-8 names are an error of that one task, with the reason;
    a split run stores every other task; a large module that is never imported is not compiled."""
    from testhelix.commands.evaluate import evaluate_split
    from testhelix.store.runstore import RunStore
    from testhelix.tasks.task import load_pack

    pack = FIXTURES / "tasks" / "pack"
    suites = tmp_path / "suites"
    bad = _good_suite(suites / "fx-clamp-m01", "fx-clamp-m01")
    os.close(os.open(os.path.join(os.fsencode(bad), b"notes\xff.txt"), os.O_CREAT | os.O_WRONLY))
    _good_suite(suites / "fx-stack-m02", "fx-stack-m02")
    store = RunStore(tmp_path / "run", command="test")
    try:
        summary = evaluate_split(ex, store, pack, ["fx-clamp-m01", "fx-stack-m02"], load_pack(pack), suites,
                                 progress=False, coverage=False, jobs=2)
        results = {r["task_id"]: r for r in store.task_results("evaluate")}
        outcomes = store.task_outcomes("evaluate")
        orders = store.conn.execute("SELECT task_id, token, run_order FROM panel_orders").fetchall()
    finally:
        store.close()
    assert summary["tasks"] == 2 and summary["missing"] == 0
    assert results["fx-stack-m02"]["S"] == 1  # the other task keeps its score
    assert results["fx-clamp-m01"]["S"] == 0 and results["fx-clamp-m01"]["submitted"]
    refused = [o for o in outcomes if o["task_id"] == "fx-clamp-m01"]
    assert refused and all(o["status"] == "error" and "not valid UTF-8" in o["reason"] for o in refused)
    assert [t for t, _, _ in orders] == ["fx-stack-m02"]  # the refused suite never ran
    task = load_task(CLAMP)
    deep = _good_suite(tmp_path / "deep", "fx-clamp-m01")
    d = deep
    for _ in range(1100):
        d = d / "n"
        d.mkdir()
    sparse = _good_suite(tmp_path / "sparse", "fx-clamp-m01")
    with open(sparse / "data.bin", "wb") as f:
        f.truncate(1 << 30)
    try:
        for suite, reason in ((deep, "nested deeper"), (sparse, "limit per file")):
            res = evaluate_task(ex, task, suite)
            assert not res.indicators.S and all(o.status == "error" and reason in (o.reason or "")
                                                    for o in res.outcomes), res.outcomes
    finally:
        force_rmtree(deep)  # pytest's own clean-up of old temporary folders recurses
    bomb = _suite(tmp_path, "bomb", {"test_nothing.py": "def test_nothing():\n    pass\n",
                                     "huge.py": "x = [\n" + "1,\n" * (1 << 20) + "]\n"})  # 2 MB, never imported
    res = evaluate_task(ex, task, bomb)
    assert not res.indicators.S and all(s == "pass" for s in res.statuses().values())
    cached = ex.trees.path(tree_sha256(bomb))
    assert (cached / "__pycache__").is_dir() and not list((cached / "__pycache__").glob("huge.*"))
