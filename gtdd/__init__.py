"""GTDD: generative test-driven development with exact audit guarantees."""
