"""The text normaliser's trusted reference (HIDDEN from agents; run in-process by the harness)."""

import re
import unicodedata

SMALL_WORDS = {"a", "an", "and", "at", "for", "in", "of", "on", "or", "the", "to"}


class Normalizer:
    def execute(self, cmd, args):
        text = args[0]
        if cmd == "SPACES":
            return re.sub(r"\s+", " ", text).strip()
        if cmd == "FOLD":
            decomposed = unicodedata.normalize("NFKD", text)
            return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
        if cmd == "TITLE":
            words = re.sub(r"\s+", " ", text).strip().split(" ")
            out = []
            for i, word in enumerate(words):
                lower = word.lower()
                out.append(lower if i > 0 and lower in SMALL_WORDS else lower[:1].upper() + lower[1:])
            return " ".join(out)
        return {"error": "UNKNOWN"}
