import pytest

from rate_limiter import RateLimiter, TokenBucket


def bucket_after_burst(capacity, rate, interval):
    bucket = TokenBucket(capacity, rate, interval, now=100)
    for _ in range(capacity):
        bucket.try_acquire(100)
    return bucket


def test_smoke_first_acquire_succeeds():
    assert TokenBucket(1, 1).try_acquire(0)


def test_smoke_stats_is_dict():
    assert set(TokenBucket(2, 1).stats()) == {"allowed", "denied"}


def test_smoke_limiter_allows_first_call():
    assert RateLimiter(1, 1, 60).allow("ip", 0)


def test_half_interval_gives_nothing():
    bucket = bucket_after_burst(4, 1, 60)
    assert bucket.tokens(130) == 0


def test_two_refills_after_two_intervals():
    bucket = bucket_after_burst(4, 1, 60)
    assert bucket.tokens(190) == 1
    assert bucket.tokens(220) == 2


def test_cap_after_long_idle():
    bucket = bucket_after_burst(4, 3, 60)
    assert bucket.tokens(100000) == 4


def test_whole_bucket_can_be_spent():
    bucket = TokenBucket(2, 1, 60)
    assert bucket.try_acquire(0) and bucket.try_acquire(0)


def test_denials_counted():
    bucket = bucket_after_burst(2, 1, 60)
    bucket.try_acquire(101)
    assert bucket.stats()["denied"] == 1


def test_backwards_clock_detected():
    bucket = TokenBucket(3, 1, 60, now=0)
    bucket.tokens(50)
    with pytest.raises(ValueError):
        bucket.tokens(49)


def test_wait_needs_two_refills():
    bucket = bucket_after_burst(5, 3, 60)
    assert bucket.wait_time(100, 4) == 120


def test_wait_time_mid_interval():
    bucket = bucket_after_burst(5, 3, 60)
    assert bucket.wait_time(145) == 15


def test_full_capacity_request_is_legal():
    bucket = TokenBucket(3, 1, 60)
    assert bucket.try_acquire(0, 3) is True


def test_new_bucket_is_full():
    assert TokenBucket(6, 2, 60, now=30).tokens(30) == 6


def test_late_key_anchor():
    limiter = RateLimiter(1, 1, 60)
    limiter.allow("user", 45)
    assert limiter.allow("user", 60) is False


def test_error_message_mentions_capacity():
    with pytest.raises(ValueError, match="exceeds the capacity 2"):
        TokenBucket(2, 1).try_acquire(0, 3)


def test_clock_error_message():
    bucket = TokenBucket(2, 1, now=10)
    with pytest.raises(ValueError, match="clock went backwards"):
        bucket.tokens(5)


def test_failed_limiter_call_still_registers_key():
    limiter = RateLimiter(2, 1, 60)
    with pytest.raises(ValueError):
        limiter.allow("k", 0, 3)
    assert limiter.keys() == ["k"]


def test_wait_time_when_tokens_left_is_one():
    assert TokenBucket(2, 1, 60).wait_time(0) == 1


def test_zero_rate_limiter_allowed():
    RateLimiter(3, 0, 60)


def test_remaining_for_new_key():
    assert RateLimiter(7, 1, 60).remaining("nobody", 0) == 7


def test_scenario_api_quota():
    bucket = TokenBucket(4, rate=2, interval=10, now=0)
    assert bucket.try_acquire(0, 4) is True
    assert bucket.try_acquire(3) is False
    assert bucket.wait_time(3, 3) == 17
    assert bucket.tokens(9) == 0
    assert bucket.tokens(15) == 2
    assert bucket.wait_time(15, 3) == 5
    assert bucket.tokens(1000) == 4
    with pytest.raises(ValueError):
        bucket.tokens(999)
    with pytest.raises(ValueError):
        bucket.try_acquire(1000, 5)
    assert bucket.stats() == {"allowed": 1, "denied": 1}
    limiter = RateLimiter(1, 1, 10)
    assert limiter.allow("u", 7) is True
    assert limiter.allow("u", 10) is False
    assert limiter.allow("u", 17) is True
