"""Semantic versions (SemVer 2.0.0 precedence) and npm-style ranges with ^, ~ and ||."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import total_ordering
from typing import Iterable, Union

__all__ = ["Range", "Version", "max_satisfying"]

_NUM = r"0|[1-9][0-9]*"
_PRE_ID = r"0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*"
_VERSION = re.compile(
    rf"({_NUM})\.({_NUM})\.({_NUM})"
    rf"(?:-((?:{_PRE_ID})(?:\.(?:{_PRE_ID}))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)


@total_ordering
@dataclass(frozen=True, eq=False)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple = ()
    build: tuple = field(default=())

    @classmethod
    def parse(cls, text: str) -> "Version":
        if not isinstance(text, str):
            raise TypeError(f"version must be a str, got {type(text).__name__}")
        match = _VERSION.fullmatch(text)
        if match is None:
            raise ValueError(f"invalid version {text!r}")
        major, minor, patch, pre, build = match.groups()
        prerelease = tuple(int(p) if p.isdigit() else p for p in pre.split(".")) if pre else ()
        return cls(int(major), int(minor), int(patch), prerelease,
                   tuple(build.split(".")) if build else ())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(map(str, self.prerelease))
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def _key(self) -> tuple:
        # A release sorts after all its prereleases; numeric identifiers before alphanumeric ones.
        if not self.prerelease:
            pre_key: tuple = ((1,),)
        else:
            pre_key = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.prerelease)
            pre_key = ((0,),) + pre_key
        return (self.major, self.minor, self.patch, pre_key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())


VersionLike = Union[Version, str]
_COMPARATOR = re.compile(r"(>=|<=|>|<|=|\^|~)?(.+)")


def _as_version(value: VersionLike) -> Version:
    return value if isinstance(value, Version) else Version.parse(value)


def _expand(op: str, v: Version) -> list[tuple[str, Version]]:
    """Turn one written comparator into primitive (operator, version) tests."""
    if op == "^":
        if v.major > 0:
            upper = Version(v.major + 1, 0, 0)
        elif v.minor > 0:
            upper = Version(0, v.minor + 1, 0)
        else:
            upper = Version(0, 0, v.patch + 1)
        return [(">=", v), ("<", upper)]
    if op == "~":
        return [("<", Version(v.major, v.minor + 1, 0)), (">=", v)]
    return [(op or "=", v)]


_TESTS = {
    "=": lambda a, b: a == b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
}


class _ComparatorSet:
    def __init__(self, text: str) -> None:
        self.tests: list[tuple[str, Version]] = []
        self.written: list[Version] = []
        for part in text.split():
            if part == "*":
                self.tests.append((">=", Version(0, 0, 0)))
                continue
            op, version_text = _COMPARATOR.fullmatch(part).groups()
            version = Version.parse(version_text)
            self.written.append(version)
            self.tests.extend(_expand(op, version))
        if not self.tests:
            raise ValueError("empty comparator set")

    def matches(self, v: Version) -> bool:
        if not all(_TESTS[op](v, bound) for op, bound in self.tests):
            return False
        if v.prerelease:
            same_tuple = (v.major, v.minor, v.patch)
            return any(w.prerelease and (w.major, w.minor, w.patch) == same_tuple for w in self.written)
        return True


class Range:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"range must be a str, got {type(text).__name__}")
        self.text = text
        self._sets = [_ComparatorSet(part) for part in text.strip().split("||")]

    def contains(self, version: VersionLike) -> bool:
        v = _as_version(version)
        return any(s.matches(v) for s in self._sets)

    def __contains__(self, version: VersionLike) -> bool:
        return self.contains(version)


def max_satisfying(versions: Iterable[VersionLike], range_text: str):
    rng = Range(range_text)
    best = None
    best_version = None
    for item in versions:
        v = _as_version(item)
        if rng.contains(v) and (best_version is None or v > best_version):
            best, best_version = item, v
    return best
