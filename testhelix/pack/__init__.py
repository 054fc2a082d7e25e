"""Task packs built from hand-written katas: loading katas, building tasks, verifying packs."""
