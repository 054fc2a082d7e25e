"""Middleware chain driven by cursor objects that know their position in a frozen stack."""

__all__ = ["Chain"]


class _Cursor:
    __slots__ = ("stack", "handler", "position", "spent")

    def __init__(self, stack, handler, position):
        self.stack = stack
        self.handler = handler
        self.position = position
        self.spent = False

    def __call__(self, request):
        if self.spent:
            raise RuntimeError("this call_next has already run")
        self.spent = True
        return _run_from(self.stack, self.handler, self.position, request)


def _run_from(stack, handler, position, request):
    if position >= len(stack):
        return handler(request)
    return stack[position][1](request, _Cursor(stack, handler, position + 1))


class Chain:
    def __init__(self, handler):
        self._handler = handler
        self._mws = []
        self._errors = []

    def use(self, mw, name=None, before=None, after=None):
        if before is not None and after is not None:
            raise ValueError("use either before= or after=")
        label = name if name is not None else mw.__name__
        current = self.names()
        if label in current:
            raise ValueError(f"name {label!r} taken")
        anchor = before if before is not None else after
        if anchor is None:
            self._mws.append((label, mw))
            return self
        if anchor not in current:
            raise KeyError(anchor)
        offset = 0 if before is not None else 1
        self._mws.insert(current.index(anchor) + offset, (label, mw))
        return self

    def remove(self, name):
        current = self.names()
        if name not in current:
            raise KeyError(f"no middleware {name!r}")
        del self._mws[current.index(name)]

    def names(self):
        return [label for label, _ in self._mws]

    def on_error(self, exc_type, handler):
        self._errors.append((exc_type, handler))
        return self

    def __call__(self, request):
        frozen = tuple(self._mws)
        try:
            return _run_from(frozen, self._handler, 0, request)
        except Exception as exc:
            for exc_type, handler in self._errors:
                if isinstance(exc, exc_type):
                    failure = exc      # `exc` is unbound once the except block ends
                    break
            else:
                raise
        return handler(failure, request)
