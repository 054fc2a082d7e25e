"""The TestHelix pipeline: K test-and-repair pairs with peer cross validation (configurations A–E)."""
