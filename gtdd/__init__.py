"""GTDD: generative test-driven development with exact audit guarantees."""

from . import schema as schema  # registers the package's run-store tables before any store opens
