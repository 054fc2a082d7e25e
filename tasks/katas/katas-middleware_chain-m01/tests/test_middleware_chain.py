import pytest

from middleware_chain import Chain


def wrapper(label):
    def mw(request, call_next):
        return f"{label}[{call_next(request)}]"
    mw.__name__ = label
    return mw


def echo(request):
    return f"h:{request}"


def chain_of(*labels):
    chain = Chain(echo)
    for label in labels:
        chain.use(wrapper(label))
    return chain


def test_no_middleware_calls_handler():
    assert Chain(echo)("r") == "h:r"


def test_use_returns_chain_and_appends_innermost():
    chain = Chain(echo)
    assert chain.use(wrapper("a")) is chain
    chain.use(wrapper("b")).use(wrapper("c"))
    assert chain("r") == "a[b[c[h:r]]]"
    assert chain.names() == ["a", "b", "c"]


def test_default_name_is_dunder_name_and_explicit_name_wins():
    def timing(request, call_next):
        return call_next(request)
    chain = Chain(echo)
    chain.use(timing)
    chain.use(timing, name="timing2")
    assert chain.names() == ["timing", "timing2"]


def test_before_inserts_outside_anchor():
    chain = chain_of("a", "b", "c")
    chain.use(wrapper("x"), before="b")
    chain.use(wrapper("y"), before="a")
    assert chain.names() == ["y", "a", "x", "b", "c"]
    assert chain("r") == "y[a[x[b[c[h:r]]]]]"


def test_after_inserts_inside_anchor():
    chain = chain_of("a", "b", "c")
    chain.use(wrapper("x"), after="a")
    chain.use(wrapper("z"), after="c")
    assert chain.names() == ["a", "x", "b", "c", "z"]


def test_unknown_anchor_and_both_anchors():
    chain = chain_of("a", "b")
    with pytest.raises(KeyError):
        chain.use(wrapper("x"), before="nope")
    with pytest.raises(KeyError):
        chain.use(wrapper("x"), after="nope")
    with pytest.raises(ValueError):
        chain.use(wrapper("x"), before="a", after="b")
    with pytest.raises(ValueError):
        chain.use(wrapper("x"), before="a", after="a")
    assert chain.names() == ["a", "b"]


def test_duplicate_names_rejected():
    chain = chain_of("a", "b")
    with pytest.raises(ValueError):
        chain.use(wrapper("a"))
    with pytest.raises(ValueError):
        chain.use(wrapper("other"), name="b")
    chain.use(wrapper("p"), name="slot")
    with pytest.raises(ValueError):
        chain.use(wrapper("q"), name="slot")
    assert chain.names() == ["a", "b", "slot"]


def test_remove_and_unknown_remove():
    chain = chain_of("a", "b", "c")
    chain.remove("b")
    assert chain.names() == ["a", "c"]
    assert chain("r") == "a[c[h:r]]"
    with pytest.raises(KeyError):
        chain.remove("b")
    with pytest.raises(KeyError):
        chain.remove("zzz")
    assert chain.names() == ["a", "c"]


def test_request_changes_flow_downstream():
    def add_user(request, call_next):
        return call_next({**request, "user": "ann"})

    def add_role(request, call_next):
        return call_next({**request, "role": request["user"] + "-admin"})

    chain = Chain(lambda req: sorted(req.items()))
    chain.use(add_user).use(add_role)
    assert chain({"path": "/"}) == [("path", "/"), ("role", "ann-admin"), ("user", "ann")]


def test_falsy_replacement_request_is_passed_on():
    chain = Chain(lambda req: repr(req))
    chain.use(lambda req, nxt: nxt(""), name="blank")
    assert chain("original") == "''"


def test_response_can_be_changed_on_the_way_out():
    chain = Chain(lambda req: "ok")
    chain.use(lambda req, nxt: nxt(req).upper(), name="shout")
    chain.use(lambda req, nxt: nxt(req) + "!", name="bang")
    assert chain(None) == "OK!"


def test_short_circuit_skips_rest():
    calls = []

    def guard(request, call_next):
        calls.append("guard")
        if request == "blocked":
            return "denied"
        return call_next(request)

    def inner(request, call_next):
        calls.append("inner")
        return call_next(request)

    handler_calls = []
    chain = Chain(lambda req: handler_calls.append(req) or "done")
    chain.use(guard).use(inner)
    assert chain("blocked") == "denied"
    assert calls == ["guard"]
    assert handler_calls == []
    assert chain("fine") == "done"
    assert calls == ["guard", "guard", "inner"]


def test_call_next_twice_raises():
    chain = Chain(echo)
    chain.use(lambda req, nxt: nxt(req) + nxt(req), name="twice")
    with pytest.raises(RuntimeError):
        chain("r")


def test_call_next_after_failure_still_counts_as_used():
    attempts = []

    def flaky(request):
        attempts.append(request)
        raise ConnectionError("down")

    def retry(request, call_next):
        try:
            return call_next(request)
        except ConnectionError:
            return call_next(request)

    chain = Chain(flaky)
    chain.use(retry)
    with pytest.raises(RuntimeError):
        chain("r")
    assert attempts == ["r"]


def test_fresh_call_next_per_invocation():
    chain = chain_of("a")
    assert chain("1") == "a[h:1]"
    assert chain("2") == "a[h:2]"


def test_changes_during_a_call_apply_to_later_calls():
    chain = Chain(echo)

    def mutate(request, call_next):
        if "late" not in chain.names():
            chain.use(wrapper("late"))
        else:
            chain.remove("late")
        return call_next(request)

    chain.use(wrapper("b"))
    chain.use(mutate)
    assert chain("r") == "b[h:r]"
    assert chain.names() == ["b", "mutate", "late"]
    assert chain("r") == "b[late[h:r]]"
    assert chain.names() == ["b", "mutate"]


def test_error_handler_gets_exception_and_original_request():
    seen = []

    def rewrite(request, call_next):
        return call_next("rewritten")

    def fail(request):
        raise ValueError(f"bad {request}")

    chain = Chain(fail)
    chain.use(rewrite)
    assert chain.on_error(ValueError, lambda exc, req: seen.append((str(exc), req)) or "recovered") is chain
    assert chain("orig") == "recovered"
    assert seen == [("bad rewritten", "orig")]


def test_error_handler_matches_subclasses_and_exact_type():
    class AppError(Exception):
        pass

    class DbError(AppError):
        pass

    class DeadlockError(DbError):
        pass

    def raiser(request):
        raise request()

    chain = Chain(raiser)
    chain.on_error(AppError, lambda exc, req: type(exc).__name__)
    assert chain(AppError) == "AppError"
    assert chain(DbError) == "DbError"
    assert chain(DeadlockError) == "DeadlockError"
    with pytest.raises(KeyError):
        chain(KeyError)


def test_first_registered_matching_error_handler_wins():
    chain = Chain(lambda req: 1 / 0)
    chain.on_error(KeyError, lambda e, r: "key")
    chain.on_error(ZeroDivisionError, lambda e, r: "zero")
    chain.on_error(ArithmeticError, lambda e, r: "arith")
    assert chain("x") == "zero"


def test_errors_from_middleware_are_handled_too():
    def broken(request, call_next):
        raise TypeError("mw broke")

    chain = Chain(echo)
    chain.use(broken)
    chain.on_error(TypeError, lambda e, r: f"caught {e} for {r}")
    assert chain("q") == "caught mw broke for q"


def test_error_handler_exception_propagates_unchanged():
    class Escalated(Exception):
        pass

    def escalate(exc, request):
        raise Escalated("from handler")

    chain = Chain(lambda req: int("x"))
    chain.on_error(ValueError, escalate)
    chain.on_error(Exception, lambda e, r: "swallowed")
    with pytest.raises(Escalated):
        chain("r")


def test_unmatched_exception_propagates():
    chain = Chain(lambda req: [][1])
    chain.on_error(KeyError, lambda e, r: "nope")
    with pytest.raises(IndexError):
        chain("r")
