"""One run's settings (the setup layer): `RunSetup`, built once from the command's options and passed
explicitly to the runner, the executor and every worker."""
