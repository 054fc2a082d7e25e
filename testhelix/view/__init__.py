"""Self-contained HTML reports of runs (`testhelix view`); `autosaddler view` adds the search DAG. MLflow
logging of a stored run (`--mlflow-uri`) is mlflow_log.py.

`render_run_report` builds the page for a helix run and/or what installed packages contribute
(testhelix/view/contributed.py: AutoSaddler's release gates) stored in a run directory: one HTML
file plus sibling trajectory pages, no network, works opened from disk.
"""

from __future__ import annotations

from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.store.runs import has_rows
from testhelix.view.contributed import view_sections
from testhelix.view.helix import helix_models, helix_sections
from testhelix.view.html import page, simulated_sentence
from testhelix.view.source import open_run
from testhelix.view.trajectories import TrajectoryPages


def write_page(out: Path, text: str) -> Path:
    out = Path(out)
    if out.exists() and out.is_dir():
        raise UserError(f"--out {out}: is a folder; give a file name such as report.html")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


def render_run_report(run_dir: Path, out: Path) -> dict:
    """Write the report of a helix run and/or its contributed sections (gates); returns what was written."""
    run_dir, out = Path(run_dir), Path(out)
    with open_run(run_dir) as opened:
        store = opened.store
        helix = has_rows(store, "task_results")
        contributed = [s for s in view_sections() if s.present(store)]
        if not helix and not contributed:
            if "search" in store.kinds():   # a kind AutoSaddler registers (testhelix/store/migrations.py)
                raise UserError(f"{run_dir}: this is a strategy search run; use `autosaddler view {run_dir}`")
            raise UserError(f"{run_dir}: no evaluated task and no gate decision in this run yet"
                            + (" (it is still running; try again later)" if opened.live else ""))
        body, nav, models = [], [], []
        pages = TrajectoryPages(out, run_dir)
        if helix:
            body += helix_sections(store, pages)
            nav += [("helix-metrics", "metrics"), ("helix-matrix", "task × configuration"),
                    ("helix-rules", "selection rules"), ("helix-usage", "tokens and cost")]
            models += helix_models(store)
        for part in contributed:
            body.append(part.render(store, run_dir))
            nav.append(part.nav)
            models += part.models(store)
        sentence = simulated_sentence(models, store.served_by_simulation().values())
        text = page(f"TestHelix run: {run_dir.name}", body, simulated=sentence, live=opened.live,
                    subtitle=f"run directory {run_dir}", nav=nav)
    write_page(out, text)
    return {"out": str(out), "bytes": out.stat().st_size, "trajectory_pages": pages.written,
            "simulated": bool(sentence), "in_progress": opened.live is not None}
