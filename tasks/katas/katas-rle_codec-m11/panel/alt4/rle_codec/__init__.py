"""RLE codec: runs found at change points, decoding by splitting the input into tokens first."""

_ASCII_DIGITS = "0123456789"


class RLEError(ValueError):
    position = None

    def __init__(self, text, position):
        ValueError.__init__(self, text)
        self.position = position


def runs(text):
    if type(text) is not str and not isinstance(text, str):
        raise TypeError("runs() expects a str")
    if not text:
        return []
    cuts = [0] + [k for k in range(1, len(text)) if text[k] != text[k - 1]] + [len(text)]
    return [(text[a], b - a) for a, b in zip(cuts, cuts[1:])]


def encode(text):
    def sym(c):
        return ("\\" + c) if (c == "\\" or c in _ASCII_DIGITS) else c
    return "".join((str(k) if k > 1 else "") + sym(c) for c, k in runs(text))


def _tokens(data):
    """Yield (start, count_text, char) lazily, so errors are met in reading order."""
    k = 0
    while k < len(data):
        start = k
        while k < len(data) and data[k] in _ASCII_DIGITS:
            k += 1
        count_text = data[start:k]
        if count_text.startswith("0"):
            raise RLEError("counts must not have a leading zero", start)
        if k == len(data):
            raise RLEError("truncated item", len(data))
        if data[k] == "\\":
            follower = data[k + 1:k + 2]
            if follower == "" or follower not in _ASCII_DIGITS + "\\":
                raise RLEError("unknown escape", k)
            yield start, count_text, follower
            k += 2
        else:
            yield start, count_text, data[k]
            k += 1


def decode(data, max_length=None):
    if not isinstance(data, str):
        raise TypeError("decode() expects a str")
    limited = max_length is not None
    if limited and (max_length is True or max_length is False or not isinstance(max_length, int)
                    or max_length < 0):
        raise ValueError("max_length must be None or a non-negative int")
    pieces, length = [], 0
    for start, count_text, char in _tokens(data):
        count = int(count_text) if count_text else 1
        if limited and length + count > max_length:
            raise RLEError("decoded text would exceed max_length", start)
        length += count
        pieces.append(char * count)
    return "".join(pieces)
