"""Middleware chain stored as a singly linked list of named nodes."""

__all__ = ["Chain"]


class _Node:
    def __init__(self, name, mw, nxt=None):
        self.name = name
        self.mw = mw
        self.next = nxt


class Chain:
    def __init__(self, handler):
        self._handler = handler
        self._head = None
        self._on_error = []

    def _nodes(self):
        node = self._head
        while node is not None:
            yield node
            node = node.next

    def _find(self, name):
        prev = None
        for node in self._nodes():
            if node.name == name:
                return prev, node
            prev = node
        raise KeyError(name)

    def use(self, mw, name=None, before=None, after=None):
        if before is not None and after is not None:
            raise ValueError("before/after conflict")
        name = getattr(mw, "__name__") if name is None else name
        if any(n.name == name for n in self._nodes()):
            raise ValueError(f"{name} exists")
        if before is not None:
            prev, target = self._find(before)
            node = _Node(name, mw, target)
            if prev is None:
                self._head = node
            else:
                prev.next = node
        elif after is not None:
            _, target = self._find(after)
            target.next = _Node(name, mw, target.next)
        else:
            last = None
            for last in self._nodes():
                pass
            node = _Node(name, mw)
            if last is None:
                self._head = node
            else:
                last.next = node
        return self

    def remove(self, name):
        prev, node = self._find(name)
        if prev is None:
            self._head = node.next
        else:
            prev.next = node.next

    def names(self):
        return [n.name for n in self._nodes()]

    def on_error(self, exc_type, handler):
        self._on_error.append((exc_type, handler))
        return self

    def __call__(self, request):
        layers = [n.mw for n in self._nodes()]     # snapshot of the current order
        handler = self._handler

        def step(i, req):
            if i == len(layers):
                return handler(req)
            used = []

            def call_next(r):
                if used:
                    raise RuntimeError("call_next called more than once")
                used.append(True)
                return step(i + 1, r)

            return layers[i](req, call_next)

        try:
            return step(0, request)
        except Exception as exc:
            for exc_type, on_error in self._on_error:
                if isinstance(exc, exc_type):
                    return on_error(exc, request)
            raise
