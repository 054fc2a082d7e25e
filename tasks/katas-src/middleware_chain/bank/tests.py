import pytest

from middleware_chain import Chain


def tagger(tag):
    def mw(request, call_next):
        return [tag] + call_next(request)
    mw.__name__ = tag
    return mw


def base_chain():
    chain = Chain(lambda request: ["handler"])
    for tag in ("log", "auth", "cache"):
        chain.use(tagger(tag))
    return chain


def test_smoke_handler_runs():
    assert Chain(lambda r: r * 2)(21) == 42


def test_smoke_names_is_list():
    assert isinstance(base_chain().names(), list)


def test_smoke_one_middleware():
    chain = Chain(lambda r: ["h"])
    chain.use(tagger("only"))
    assert chain(None) == ["only", "h"]


def test_order_is_registration_order():
    assert base_chain()(None) == ["log", "auth", "cache", "handler"]


def test_before_middle():
    chain = base_chain()
    chain.use(tagger("rate"), before="cache")
    assert chain.names() == ["log", "auth", "rate", "cache"]


def test_after_first():
    chain = base_chain()
    chain.use(tagger("trace"), after="log")
    assert chain(None)[:3] == ["log", "trace", "auth"]


def test_modified_request_reaches_handler():
    chain = Chain(lambda r: r)
    chain.use(lambda r, nxt: nxt(r + 1), name="inc")
    assert chain(1) == 2


def test_double_next_is_refused():
    chain = Chain(lambda r: 1)
    chain.use(lambda r, nxt: (nxt(r), nxt(r)), name="dup")
    with pytest.raises(RuntimeError):
        chain(0)


def test_removal_during_call_is_deferred():
    chain = base_chain()

    def remover(request, call_next):
        if "cache" in chain.names():
            chain.remove("cache")
        return call_next(request)

    chain.use(remover, before="log")
    assert chain(None)[-2:] == ["cache", "handler"]


def test_error_handler_catches_subclass():
    chain = Chain(lambda r: int("nan"))
    chain.on_error(Exception, lambda e, r: "fallback")
    assert chain(None) == "fallback"


def test_registration_order_of_error_handlers():
    chain = Chain(lambda r: {}["k"])
    chain.on_error(KeyError, lambda e, r: "specific")
    chain.on_error(Exception, lambda e, r: "general")
    assert chain(None) == "specific"


def test_error_handler_argument_order():
    chain = Chain(lambda r: 1 / 0)
    chain.on_error(ZeroDivisionError, lambda e, r: (isinstance(e, ZeroDivisionError), r))
    assert chain("req") == (True, "req")


def test_remove_missing_raises():
    with pytest.raises(KeyError):
        base_chain().remove("compress")


def test_same_name_twice_refused():
    chain = base_chain()
    with pytest.raises(ValueError):
        chain.use(lambda r, n: n(r), name="auth")


def test_names_are_a_tuple():
    assert base_chain().names() == ("log", "auth", "cache")


def test_remove_returns_removed_middleware():
    chain = base_chain()
    assert callable(chain.remove("auth"))


def test_handler_failure_keeps_original_as_context():
    def fail_again(exc, request):
        raise RuntimeError("handler failed")

    chain = Chain(lambda r: 1 / 0)
    chain.on_error(ZeroDivisionError, fail_again)
    with pytest.raises(RuntimeError) as info:
        chain(None)
    assert isinstance(info.value.__context__, ZeroDivisionError)


def test_runtime_error_message():
    chain = Chain(lambda r: 1)
    chain.use(lambda r, nxt: (nxt(r), nxt(r)), name="dup")
    with pytest.raises(RuntimeError, match="already called"):
        chain(0)


def test_short_circuit_response():
    chain = base_chain()
    chain.use(lambda r, nxt: ["cached"], name="hit", before="auth")
    assert chain(None) == ["log", "cached"]


def test_scenario_request_pipeline():
    seen = []

    def auth(request, call_next):
        return call_next(dict(request, user="ann"))

    def audit(request, call_next):
        seen.append(request.get("user"))
        return call_next(request)

    def handler(request):
        if request.get("fail"):
            raise KeyError("fail")
        return ["handled", request["user"]]

    chain = Chain(handler)
    chain.use(tagger("outer")).use(audit).use(auth, before="audit")
    chain.use(tagger("inner"), after="audit")
    assert chain.names() == ["outer", "auth", "audit", "inner"]
    assert chain({}) == ["outer", "inner", "handled", "ann"]
    assert seen == ["ann"]
    with pytest.raises(ValueError):
        chain.use(tagger("x"), name="audit")
    with pytest.raises(KeyError):
        chain.remove("missing")
    chain.on_error(LookupError, lambda e, r: ("lookup", r))
    chain.on_error(KeyError, lambda e, r: ("key", r))
    assert chain({"fail": True}) == ("lookup", {"fail": True})
    chain.use(lambda r, nxt: (nxt(r), nxt(r)), name="double", after="inner")
    with pytest.raises(RuntimeError):
        chain({})
