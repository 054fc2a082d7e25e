"""Task format: loading and digest-checking task folders (tasks/README.md), and importers.

Modules: `task` (load a task, its public part and hidden panel), `importers` (Harbor and
SWE-bench style sources into the task layout).
"""
