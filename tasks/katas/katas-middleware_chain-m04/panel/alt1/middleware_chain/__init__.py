"""Middleware chain that folds the stack into nested closures, innermost first, per call."""
from functools import reduce

__all__ = ["Chain"]


def _wrap(mw, inner):
    def layer(request):
        state = {"called": False}

        def call_next(req):
            if state["called"]:
                raise RuntimeError("call_next used twice")
            state["called"] = True
            return inner(req)

        return mw(request, call_next)
    return layer


class Chain:
    def __init__(self, handler):
        self.handler = handler
        self.entries = []
        self.catchers = []

    def _pos(self, name):
        names = [n for n, _ in self.entries]
        if name not in names:
            raise KeyError(name)
        return names.index(name)

    def use(self, mw, name=None, before=None, after=None):
        if None not in (before, after):
            raise ValueError("before and after are exclusive")
        if name is None:
            name = mw.__name__
        if name in (n for n, _ in self.entries):
            raise ValueError("duplicate middleware name")
        if before is not None:
            at = self._pos(before)
        elif after is not None:
            at = self._pos(after) + 1
        else:
            at = len(self.entries)
        self.entries[at:at] = [(name, mw)]
        return self

    def remove(self, name):
        self.entries.pop(self._pos(name))

    def names(self):
        return [n for n, _ in self.entries]

    def on_error(self, exc_type, handler):
        self.catchers.append((exc_type, handler))
        return self

    def __call__(self, request):
        run = reduce(lambda inner, entry: _wrap(entry[1], inner), reversed(self.entries), self.handler)
        try:
            return run(request)
        except Exception as exc:
            handler = next((h for t, h in self.catchers if isinstance(exc, t)), None)
            if handler is None:
                raise
            return handler(exc, request)
