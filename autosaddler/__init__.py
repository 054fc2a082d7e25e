"""AutoSaddler: strategy search over TestHelix strategies."""

from . import schema as schema  # registers the package's run-store tables before any store opens
