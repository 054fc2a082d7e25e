"""AutoSaddler: strategy search over TestHelix strategies."""
