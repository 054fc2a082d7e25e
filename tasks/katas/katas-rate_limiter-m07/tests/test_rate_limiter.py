import pytest

from rate_limiter import RateLimiter, TokenBucket


def drained(capacity=3, rate=1, interval=10, now=0):
    bucket = TokenBucket(capacity, rate, interval, now)
    assert bucket.try_acquire(now, capacity) is True
    return bucket


def test_starts_full():
    bucket = TokenBucket(4, 1, 10, now=7)
    assert bucket.tokens(7) == 4
    assert [bucket.try_acquire(7) for _ in range(5)] == [True, True, True, True, False]
    assert bucket.tokens(7) == 0


@pytest.mark.parametrize("args", [(0, 1, 1), (3, 0, 1), (3, 1, 0), (-2, 1, 1)])
def test_bad_parameters(args):
    with pytest.raises(ValueError):
        TokenBucket(*args)
    with pytest.raises(ValueError):
        RateLimiter(*args)


@pytest.mark.parametrize("args", [(2.0, 1, 1), (2, True, 1), (2, 1, "1")])
def test_non_int_parameters(args):
    with pytest.raises(TypeError):
        TokenBucket(*args)


def test_no_refill_before_a_whole_interval():
    bucket = drained()
    assert bucket.tokens(1) == 0
    assert bucket.tokens(5) == 0
    assert bucket.tokens(9) == 0
    assert bucket.try_acquire(9) is False
    assert bucket.tokens(10) == 1


def test_refill_adds_rate_per_interval():
    bucket = drained(capacity=10, rate=3, interval=4)
    assert bucket.tokens(4) == 3
    assert bucket.tokens(7) == 3
    assert bucket.tokens(8) == 6
    assert bucket.tokens(15) == 9


def test_partial_progress_is_kept_between_calls():
    bucket = drained(capacity=5, rate=1, interval=10)
    assert bucket.tokens(15) == 1
    assert bucket.tokens(20) == 2
    assert bucket.try_acquire(27) is True
    assert bucket.tokens(30) == 2


def test_refill_capped_at_capacity():
    bucket = drained(capacity=3, rate=2, interval=5)
    assert bucket.tokens(5) == 2
    assert bucket.tokens(10) == 3
    assert bucket.tokens(1000) == 3


def test_anchor_advances_while_full():
    bucket = TokenBucket(2, 1, 10, now=0)
    assert bucket.try_acquire(95, 2) is True
    assert bucket.tokens(99) == 0
    assert bucket.tokens(100) == 1


def test_acquire_exactly_available_tokens():
    bucket = TokenBucket(5, 1, 10)
    assert bucket.try_acquire(0, 3) is True
    assert bucket.try_acquire(0, 2) is True
    assert bucket.try_acquire(0, 1) is False


def test_failed_acquire_takes_nothing():
    bucket = TokenBucket(5, 1, 10)
    bucket.try_acquire(0, 3)
    assert bucket.try_acquire(0, 4) is False
    assert bucket.tokens(0) == 2
    assert bucket.try_acquire(0, 2) is True
    assert bucket.try_acquire(0, 1) is False


def test_n_bounds():
    bucket = TokenBucket(4, 1, 10)
    assert bucket.try_acquire(0, 4) is True
    assert bucket.try_acquire(0, 4) is False
    for bad in (0, 5, -1):
        with pytest.raises(ValueError):
            bucket.try_acquire(1, bad)
        with pytest.raises(ValueError):
            bucket.wait_time(1, bad)
    with pytest.raises(TypeError):
        bucket.try_acquire(1, 1.0)


def test_stats_count_calls():
    bucket = TokenBucket(2, 1, 10)
    bucket.try_acquire(0, 2)
    bucket.try_acquire(1)
    bucket.try_acquire(2, 2)
    bucket.try_acquire(10)
    assert bucket.stats() == {"allowed": 2, "denied": 2}
    assert TokenBucket(1, 1).stats() == {"allowed": 0, "denied": 0}


def test_same_now_repeatedly_is_fine():
    bucket = TokenBucket(3, 1, 10, now=4)
    assert bucket.tokens(4) == 3
    assert bucket.try_acquire(4) is True
    assert bucket.wait_time(4) == 0
    assert bucket.tokens(4) == 2


def test_clock_going_backwards_rejected():
    bucket = TokenBucket(5, 1, 10, now=0)
    bucket.tokens(8)
    for call in (lambda: bucket.tokens(3), lambda: bucket.try_acquire(7),
                 lambda: bucket.wait_time(0)):
        with pytest.raises(ValueError):
            call()
    assert bucket.stats() == {"allowed": 0, "denied": 0}
    with pytest.raises(ValueError):
        TokenBucket(5, 1, 10, now=20).tokens(19)
    with pytest.raises(TypeError):
        bucket.tokens(9.5)


def test_wait_time_zero_when_enough():
    bucket = TokenBucket(3, 1, 10)
    assert bucket.wait_time(0, 3) == 0
    assert bucket.tokens(0) == 3


def test_wait_time_counts_from_anchor():
    bucket = drained(capacity=2, rate=1, interval=10)
    assert bucket.wait_time(0) == 10
    assert bucket.wait_time(7) == 3
    assert bucket.wait_time(7, 2) == 13
    assert bucket.try_acquire(9) is False
    assert bucket.try_acquire(10) is True


def test_wait_time_rounds_refills_up():
    bucket = drained(capacity=8, rate=4, interval=10)
    assert bucket.wait_time(0, 4) == 10
    assert bucket.wait_time(0, 5) == 20
    assert bucket.wait_time(0, 8) == 20
    assert bucket.wait_time(3, 1) == 7


def test_wait_time_is_exact():
    bucket = drained(capacity=6, rate=2, interval=7, now=3)
    wait = bucket.wait_time(5, 5)
    assert wait == 19
    assert bucket.try_acquire(5 + wait - 1, 5) is False
    assert bucket.try_acquire(5 + wait, 5) is True


def test_limiter_keys_are_independent():
    limiter = RateLimiter(2, 1, 10)
    assert limiter.allow("a", 0) is True
    assert limiter.allow("a", 0) is True
    assert limiter.allow("a", 0) is False
    assert limiter.allow("b", 0) is True
    assert limiter.remaining("b", 0) == 1
    assert limiter.keys() == ["a", "b"]


def test_limiter_bucket_anchored_at_first_call():
    limiter = RateLimiter(1, 1, 10)
    assert limiter.allow("k", 25) is True
    assert limiter.allow("k", 30) is False
    assert limiter.allow("k", 34) is False
    assert limiter.allow("k", 35) is True


def test_limiter_clock_per_key():
    limiter = RateLimiter(3, 1, 5)
    limiter.allow("late", 100)
    assert limiter.allow("early", 3) is True
    with pytest.raises(ValueError):
        limiter.allow("late", 99)


def test_limiter_remaining_unknown_key_does_not_create():
    limiter = RateLimiter(4, 1, 10)
    assert limiter.remaining("ghost", 50) == 4
    assert limiter.keys() == []
    limiter.allow("x", 0, 3)
    assert limiter.remaining("x", 9) == 1
    assert limiter.remaining("x", 10) == 2


def test_limiter_forget():
    limiter = RateLimiter(2, 1, 10)
    limiter.allow("x", 0, 2)
    assert limiter.forget("x") is True
    assert limiter.forget("x") is False
    assert limiter.forget("never") is False
    assert limiter.keys() == []
    assert limiter.allow("x", 1, 2) is True
