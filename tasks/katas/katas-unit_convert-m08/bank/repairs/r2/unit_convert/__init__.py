"""unit_convert: convert quantities between units of length, mass, time and temperature."""
from unit_convert.cli import main

__all__ = ["main"]
