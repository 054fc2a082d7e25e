"""The TestHelix strategy: its model, learned-prose rules, lesson retrieval and the skills library it routes."""

from testhelix.strategy.model import Lesson, Strategy, initial_strategy, load_strategy

__all__ = ["Lesson", "Strategy", "initial_strategy", "load_strategy"]
