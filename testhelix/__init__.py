"""TestHelix: test generation with K test-and-repair pairs, TestPrism evaluation and the shared layers."""

__version__ = "0.1.0"
