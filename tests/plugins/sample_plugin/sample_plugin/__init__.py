"""Sample plug-ins living outside the project: a model provider, an executor, a sandbox and a GTDD
domain, registered through entry points (pyproject.toml) and usable by dotted path as well."""
