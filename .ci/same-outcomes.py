"""Exit 1 unless two `testhelix run` folders recorded the same per-task outcomes (used by
.ci/local-model: the model behind llama.cpp's server against the same model in process).

    python .ci/same-outcomes.py RUN_A RUN_B
"""

import sys

from testhelix.store.runstore import RunStore

FIELDS = ("task_id", "submitted", "suite_digest", "F", "A", "R", "S", "tokens", "calls")


def outcomes(run: str) -> list[tuple]:
    store = RunStore(run)
    try:
        return [tuple(row[f] for f in FIELDS) for row in store.task_results()]
    finally:
        store.close()


a, b = outcomes(sys.argv[1]), outcomes(sys.argv[2])
for name, rows in ((sys.argv[1], a), (sys.argv[2], b)):
    for row in rows:
        print(f"{name}: " + " ".join(f"{f}={v}" for f, v in zip(FIELDS, row)))
if not a or a != b:
    sys.exit("the per-task outcomes differ (or none were recorded)")
print("same per-task outcomes")
