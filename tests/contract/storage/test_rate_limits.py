"""RateLimits: the GCRA the waiting room and the booking limit rely on (services/admission.py)."""
from __future__ import annotations

NOW = 1_900_000_000_000       # epoch ms
INTERVAL = 100


def test_a_customer_takes_its_burst_then_hears_the_stored_arrival_time(backend, ids):
    limits, customer = backend.rate_limits, ids("ann")
    ceiling = NOW + 250
    taken = [limits.rate_take("booking", customer, NOW, INTERVAL, ceiling) for _ in range(3)]
    assert taken == [None, None, None]                      # tat NOW+100, +200, +300
    refused = limits.rate_take("booking", customer, NOW, INTERVAL, ceiling)
    assert refused == NOW + 300 and isinstance(refused, int)
    assert limits.rate_take("booking", customer, NOW, INTERVAL, ceiling) == NOW + 300   # a refusal takes nothing


def test_an_arrival_time_equal_to_now_still_counts_as_busy(backend, ids):
    limits, customer = backend.rate_limits, ids("ann")
    assert limits.rate_take("s", customer, NOW, INTERVAL, NOW) is None               # tat NOW+100
    assert limits.rate_take("s", customer, NOW + 100, INTERVAL, NOW + 100) is None   # tat == now: +100
    assert limits.rate_take("s", customer, NOW + 100, INTERVAL, NOW + 100) == NOW + 200


def test_an_idle_customer_starts_afresh_and_the_state_expires_an_hour_on(backend, ids):
    limits, customer = backend.rate_limits, ids("ann")
    assert limits.rate_take("s", customer, NOW, INTERVAL, NOW) is None
    assert limits.rate_take("s", customer, NOW, INTERVAL, NOW) == NOW + INTERVAL
    later = NOW + 10_000
    assert limits.rate_take("s", customer, later, INTERVAL, later) is None
    item = backend.raw(f"RATE#s#{customer}", "GCRA")
    assert item["tat"] == later + INTERVAL and item["ttl"] == later // 1000 + 3600


def test_scopes_and_customers_are_apart(backend, ids):
    limits = backend.rate_limits
    assert limits.rate_take("a", ids("ann"), NOW, INTERVAL, NOW) is None
    assert limits.rate_take("a", ids("ann"), NOW, INTERVAL, NOW) is not None
    assert limits.rate_take("b", ids("ann"), NOW, INTERVAL, NOW) is None
    assert limits.rate_take("a", ids("ben"), NOW, INTERVAL, NOW) is None
