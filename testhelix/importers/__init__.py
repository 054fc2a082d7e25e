"""Importers that turn outside task formats into our task layout (tasks/README.md), and what they share (common.py).

- `import_harbor(source, pack)` (harbor.py): a Harbor task folder, or a folder of them.
- `import_swebench(jsonl, snapshots, pack)` (swebench.py): SWE-bench / SWT-bench style records with
  a local repository snapshot per record.

Shared rules, enforced here:
- **Nothing from a task runs on the host.** Scripts run in the sandbox (script_sandbox.py), trusted
  tests through the sandboxed executor, each in the task's own Python environment when it has one.
- **Atomic per task.** A task is written into a staging folder inside the pack and renamed into
  place only when complete and checked; a refused task leaves nothing behind.
- **Idempotent.** A rerun compares the staged task with the one in the pack: identical -> left as is
  ("unchanged"); different and written by the same importer -> replaced ("updated"); anything else
  in the way -> refused.
"""
