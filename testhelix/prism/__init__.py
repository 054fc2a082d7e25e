"""TestPrism: judging a submitted suite against a task's hidden panel, and the metrics.

Modules: evaluation.py (one suite on one task: outcomes and the F/A/R/S indicators),
metrics.py (rates over a split), coverage.py (change and entry coverage), panel.py (panel
analysis: diversity, expected joint score), astfeatures.py, plots.py. The task format lives in
`testhelix.tasks`, sandboxed execution in `testhelix.execution`.
"""
