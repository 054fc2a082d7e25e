"""URL slugs: transliteration table, accent stripping, separators and a length limit."""
from __future__ import annotations

import re
import unicodedata
from typing import Container, Mapping

__all__ = ["DEFAULT_TABLE", "slugify", "unique_slug"]

DEFAULT_TABLE: dict[str, str] = {
    "ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss",
    "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE",
    "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "&": " and ",
}

_WORD = re.compile(r"[A-Za-z0-9]+")


def _check_options(separator: object, max_length: object) -> None:
    if not isinstance(separator, str) or not 1 <= len(separator) <= 3:
        raise ValueError(f"separator must be a string of 1 to 3 characters, got {separator!r}")
    if any(ch.isascii() and ch.isalnum() for ch in separator):
        raise ValueError(f"separator must not contain letters or digits: {separator!r}")
    if max_length is not None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"max_length must be a positive int or None, got {max_length!r}")


def _transliterate(text: str, table: Mapping[str, str] | None) -> str:
    merged = dict(DEFAULT_TABLE)
    if table:
        merged.update(table)
    # One pass over the characters, so replacement text is never re-translated.
    return "".join(merged.get(ch, ch) for ch in text)


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _truncate(words: list[str], separator: str, limit: int) -> str:
    """Longest whole-word prefix within `limit`, or a cut first word."""
    kept: list[str] = []
    length = 0
    for word in words:
        extra = len(word) if not kept else len(separator) + len(word)
        if length + extra > limit:
            break
        kept.append(word)
        length += extra
    if not kept and words:
        return words[0][:limit]
    return separator.join(kept)


def _words(text: str, lowercase: bool, table: Mapping[str, str] | None) -> list[str]:
    plain = _strip_accents(_transliterate(_strip_accents(text), table))
    words = _WORD.findall(plain)
    if lowercase:
        words = [w.lower() for w in words]
    return words


def slugify(text: str, *, separator: str = "-", max_length: int | None = None,
            lowercase: bool = True, table: Mapping[str, str] | None = None) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    _check_options(separator, max_length)
    words = _words(text, lowercase, table)
    if max_length is not None:
        return _truncate(words, separator, max_length)
    return separator.join(words)


def unique_slug(text: str, existing: Container[str], *, separator: str = "-",
                max_length: int | None = None, lowercase: bool = True,
                table: Mapping[str, str] | None = None) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    _check_options(separator, max_length)
    words = _words(text, lowercase, table) or ["item"]
    first = _truncate(words, separator, max_length) if max_length is not None else separator.join(words)
    if first not in existing:
        return first
    number = 2
    while True:
        suffix = f"{separator}{number}"
        if max_length is None:
            base = separator.join(words)
        else:
            room = max_length - len(suffix)
            if room < 1:
                raise ValueError(f"max_length {max_length} leaves no room for a unique slug")
            base = _truncate(words, separator, room)
        candidate = base + suffix
        if candidate not in existing:
            return candidate
        number += 1
