"""Injectable defects of the text normaliser's reference (exact text edits, as for the key-value store).

Two of them are harmless under the domain's rubric (its judge ignores leading and trailing
whitespace and the case of small words after the first): they fail exact equality but not the judged
loss, which is what the example shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from gtdd.domains.base import Defect

DEFECTS: tuple[Defect, ...] = (
    Defect("spaces-tabs-kept", "spacing", "SPACES collapses spaces only, keeping tabs and newlines",
           'return re.sub(r"\\s+", " ", text).strip()', 'return re.sub(r" +", " ", text).strip()'),
    Defect("spaces-no-strip", "spacing", "SPACES keeps leading and trailing whitespace (immaterial to the rubric)",
           'return re.sub(r"\\s+", " ", text).strip()', 'return re.sub(r"\\s+", " ", text)'),
    Defect("fold-keeps-marks", "accents", "FOLD keeps combining marks (decomposes only)",
           "if not unicodedata.combining(ch))", "if True)"),
    Defect("fold-ascii-only", "accents", "FOLD drops every non-ASCII character left after decomposition",
           'return "".join(ch for ch in decomposed', 'return "".join(ch for ch in decomposed if ch.isascii()'),
    Defect("title-small-capitalised", "titles", "TITLE capitalises small words too (immaterial to the rubric)",
           "lower if i > 0 and lower in SMALL_WORDS else", "lower if False else"),
    Defect("title-first-small-lower", "titles", "TITLE leaves a small first word in lower case",
           "lower if i > 0 and lower in SMALL_WORDS else", "lower if lower in SMALL_WORDS else"),
)


def apply_defects(source: str, ids: Sequence[str]) -> str:
    by_id = {d.id: d for d in DEFECTS}
    for defect_id in ids:
        d = by_id[defect_id]
        if source.count(d.find) != 1:
            raise ValueError(f"defect {defect_id}: its text is not found exactly once")
        source = source.replace(d.find, d.replace)
    return source
