"""The TestHelix strategy: its model, learned-prose rules and lesson retrieval."""

from testhelix.strategy.model import Lesson, Strategy, initial_strategy, load_strategy

__all__ = ["Lesson", "Strategy", "initial_strategy", "load_strategy"]
