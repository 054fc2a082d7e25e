"""Conformance checks for plug-in authors (`testhelix plugin check`), part of the tools layer."""
