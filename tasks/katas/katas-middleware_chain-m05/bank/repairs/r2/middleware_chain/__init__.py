"""A chain of middleware around a handler, dispatched recursively by index."""

__all__ = ["Chain"]


class _Once:
    """The call_next given to one middleware invocation; refuses to run twice."""

    def __init__(self, run):
        self._run = run
        self._used = False

    def __call__(self, request):
        if self._used:
            raise RuntimeError("call_next was already called")
        self._used = False
        return self._run(request)


class Chain:
    def __init__(self, handler):
        self._handler = handler
        self._stack = []            # [(name, middleware)], outermost first
        self._error_handlers = []   # [(exception type, handler)]

    def _index(self, name):
        for i, (existing, _) in enumerate(self._stack):
            if existing == name:
                return i
        raise KeyError(name)

    def use(self, mw, name=None, before=None, after=None):
        if before is not None and after is not None:
            raise ValueError("give either before or after, not both")
        name = mw.__name__ if name is None else name
        if any(existing == name for existing, _ in self._stack):
            raise ValueError(f"middleware {name!r} already in the chain")
        if before is not None:
            position = self._index(before)
        elif after is not None:
            position = self._index(after) + 1
        else:
            position = len(self._stack)
        self._stack.insert(position, (name, mw))
        return self

    def remove(self, name):
        del self._stack[self._index(name)]

    def names(self):
        return [name for name, _ in self._stack]

    def on_error(self, exc_type, handler):
        self._error_handlers.append((exc_type, handler))
        return self

    def __call__(self, request):
        stack = list(self._stack)   # later use()/remove() must not affect this call

        def dispatch(index, req):
            if index == len(stack):
                return self._handler(req)
            _, mw = stack[index]
            return mw(req, _Once(lambda r: dispatch(index + 1, r)))

        try:
            return dispatch(0, request)
        except Exception as exc:
            for exc_type, handler in self._error_handlers:
                if isinstance(exc, exc_type):
                    return handler(exc, request)
            raise
