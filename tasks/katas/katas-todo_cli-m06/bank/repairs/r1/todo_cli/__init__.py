"""A to-do list command line tool storing its items in a JSON file."""
from todo_cli.cli import main

__all__ = ["main"]
