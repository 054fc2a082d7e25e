"""Isolated launcher for one batch of traces; run as a FILE (never imported as part of `gtdd`).

Started by runner.py as `[sandbox launch prefix] python -s -P sandbox_launch.py KIND SERVER_DIR WORKSPACE
UID RESULT_FD CPU_S MEMORY_MB`. It reuses the TestPrism sandbox primitives (testhelix/prism/sandbox.py):
in the namespaced sandbox it is already in fresh network/mount/IPC/UTS namespaces, builds the
minimal root, unshares a PID namespace, and forks PID 1, which chroots into the root with the
workspace at /workspace and forks the worker; the worker drops to an unprivileged uid with
no_new_privs and rlimits, clears its environment to the sandbox allow-list and runs the trace driver.
In the plain fallback the same calls give a scrubbed environment, rlimits and a Python-level network
block only. The gtdd package (and with it the reference implementation) is never imported here, and
the candidate's sys.path holds only the workspace and the standard library.
"""

import importlib.util
import os
import signal
import sys
from pathlib import Path

from testhelix.prism.outcome import Limits
from testhelix.prism.sandbox import detect_sandbox, sandbox_env
from testhelix.prism.syscalls import PR_SET_PDEATHSIG, prctl

DRIVER_FILE = "_gtdd_trace_child.py"
STDLIB_PATHS = [p for p in sys.path if p and p.startswith(sys.base_prefix) and "site-packages" not in p]
# The plain fallback drops to a uid that may not be able to read the Python installation (here it
# lives under /root); the modules a store implementation commonly uses are loaded before that.
PRELOAD = ("bisect", "collections", "copy", "dataclasses", "enum", "fnmatch", "functools", "heapq",
           "itertools", "json", "math", "operator", "re", "string", "time", "typing")


def worker(sandbox, cwd, uid, limits, result_fd):
    """Never returns."""
    code = 70
    try:
        os.chdir(cwd)
        os.umask(0o022)
        spec = importlib.util.spec_from_file_location("_gtdd_trace_child", os.path.join(cwd, DRIVER_FILE))
        driver = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(driver)  # loaded before confinement; stdlib only
        if sandbox.kind == "plain":
            for name in PRELOAD:
                importlib.import_module(name)
        sandbox.confine(limits, uid)
        tmp = "/tmp" if sandbox.kind == "namespaced" else cwd
        os.environ.clear()
        os.environ.update(sandbox_env(home=tmp, tmp=tmp, pythonpath=cwd))
        sys.path[:] = [cwd] + [p for p in STDLIB_PATHS if os.path.isdir(p)]
        sys.argv = [DRIVER_FILE, str(result_fd)]
        os.write(result_fd, b'{"ready":1}\n')
        driver.main()
        code = 0
    except BaseException:  # noqa: BLE001 - leave without running any launcher code again
        code = 71
    finally:
        os._exit(code)


def main():
    kind, server_dir, workspace, uid, result_fd, cpu_s, memory_mb = sys.argv[1:8]
    uid, result_fd = int(uid), int(result_fd)
    limits = Limits(wall_s=float(cpu_s) + 5, cpu_s=int(cpu_s), memory_mb=int(memory_mb), fsize_mb=8,
                    nofile=64, nproc=32)
    sandbox = detect_sandbox(kind)
    sandbox.setup_server(Path(server_dir))
    init = sandbox.fork_job()
    if init == 0:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        cwd = sandbox.enter_job(Path(workspace), limits)
        if not sandbox.pid_namespace:
            worker(sandbox, cwd, uid, limits, result_fd)
        child = os.fork()  # PID 1 stays root and reaps; the worker is an ordinary process
        if child == 0:
            worker(sandbox, cwd, uid, limits, result_fd)
        os.close(result_fd)
        while True:
            pid, status = os.wait()
            if pid == child:
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    os.close(result_fd)
    _, status = os.waitpid(init, 0)
    sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()
