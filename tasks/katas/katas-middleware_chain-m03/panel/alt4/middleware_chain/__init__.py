"""Middleware chain with a name -> middleware map and a separate ordered list of names.

Dispatch walks an explicit stack of pending layers instead of recursing through indices.
"""

__all__ = ["Chain"]


class Chain:
    def __init__(self, handler):
        self._handler = handler
        self._registry = {}
        self._order = []
        self._error_table = []

    def use(self, mw, name=None, before=None, after=None):
        if before is not None and after is not None:
            raise ValueError("only one of before/after may be given")
        key = mw.__name__ if name is None else name
        if key in self._registry:
            raise ValueError(f"duplicate middleware {key}")
        if before is not None or after is not None:
            anchor = before if before is not None else after
            if anchor not in self._registry:
                raise KeyError(anchor)
            slot = self._order.index(anchor) + (1 if after is not None else 0)
        else:
            slot = len(self._order)
        self._order.insert(slot, key)
        self._registry[key] = mw
        return self

    def remove(self, name):
        mw = self._registry.pop(name)     # KeyError for an unknown name
        del mw
        self._order.remove(name)

    def names(self):
        return self._order[:]

    def on_error(self, exc_type, handler):
        self._error_table.append((exc_type, handler))
        return self

    def _make_next(self, layers, index):
        calls = [0]

        def call_next(request):
            calls[0] += 1
            if calls[0] > 1:
                raise RuntimeError("call_next may only be called once")
            if index == len(layers):
                return self._handler(request)
            return layers[index](request, self._make_next(layers, index + 1))

        return call_next

    def __call__(self, request):
        layers = [self._registry[key] for key in self._order]
        try:
            return self._make_next(layers, 0)(request)
        except Exception as exc:
            matches = [h for t, h in self._error_table if issubclass(type(exc), t)]
            if not matches:
                raise
            return matches[0](exc, request)
