"""Task format: loading and digest-checking task folders (tasks/README.md).

Modules: `model` (the one pydantic owner of `task.toml` and `panel/manifest.json`), `task` (load a
task, its public part and hidden panel), `splits` (split files: make and check). Importers from
outside formats live in testhelix/importers/.
"""
