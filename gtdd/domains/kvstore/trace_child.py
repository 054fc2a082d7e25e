"""Driver that runs INSIDE the isolated child process (stdlib only; copied next to the candidate).

Reads {"module": ..., "entry": ..., "timeout": ..., "traces": [[op, ...], ...]} as JSON from stdin,
imports the candidate, runs each trace on a fresh instance under a per-trace interval timer, and
writes {"loaded": 1} once the candidate is imported, then one JSON line per trace to the result pipe
whose descriptor is argv[1]:
{"i": index, "replies": [...], "error": null | "<class>"}. An import failure is a single line
{"import_error": "<exception type>"}.
"""

import importlib
import json
import math
import os
import signal
import sys


class TraceTimeout(BaseException):
    """BaseException so that a candidate's `except Exception` cannot swallow it."""


def on_alarm(signum, frame):
    raise TraceTimeout()


def json_value(value):
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and json_value(v) for k, v in value.items())
    return False


def main():
    out = int(sys.argv[1])
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    write = os.write

    def emit(record):
        write(out, (json.dumps(record, separators=(",", ":")) + "\n").encode())

    signal.signal(signal.SIGALRM, on_alarm)
    timeout = float(job["timeout"])
    try:
        signal.setitimer(signal.ITIMER_REAL, max(timeout * 10, 2.0))  # bound the import too
        module = importlib.import_module(job["module"])
        factory = getattr(module, job["entry"])
        signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as exc:  # noqa: BLE001 - any failure to import is classified, never raised
        signal.setitimer(signal.ITIMER_REAL, 0)
        emit({"import_error": "timeout" if isinstance(exc, TraceTimeout) else type(exc).__name__})
        return
    emit({"loaded": 1})
    for index in range(int(job.get("start", 0)), len(job["traces"])):
        ops = job["traces"][index]
        replies, error = [], None
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            instance = factory()
            for op in ops:
                reply = instance.execute(op["cmd"], list(op["args"]))
                if not json_value(reply):
                    error = "malformed"
                    break
                replies.append(reply)
            signal.setitimer(signal.ITIMER_REAL, 0)
        except TraceTimeout:
            error = "timeout"
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure is the result
            signal.setitimer(signal.ITIMER_REAL, 0)
            error = type(exc).__name__
        try:
            emit({"i": index, "replies": replies, "error": error})
        except (TypeError, ValueError, RecursionError):
            emit({"i": index, "replies": [], "error": "malformed"})


if __name__ == "__main__":
    main()
