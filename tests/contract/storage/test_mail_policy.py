"""MailPolicy: the suppression list, a customer's confirmed and pending addresses, and the hourly
count per address (services/mail_policy.py decides with them; adapters/mail_policy_store.py)."""
from __future__ import annotations

T0, T1, T2 = "2031-01-01T10:00:00.000Z", "2031-01-01T11:00:00.000Z", "2031-01-08T10:00:00.000Z"


def test_an_address_is_suppressed_once_and_stays(backend, ids):
    mail, key = backend.mail, ids("addr")
    assert mail.is_suppressed(key) is False
    assert mail.suppress(key, "bounce", T0) is True
    assert mail.suppress(key, "complaint", T1) is False                 # the first reason stays
    assert mail.is_suppressed(key) is True and mail.is_suppressed(ids("other")) is False
    assert backend.raw(f"MAIL#{key}", "SUPPRESSED")["reason"] == "bounce"


def test_one_confirmation_request_at_a_time_and_a_lapsed_one_is_replaced(backend, ids):
    mail, ann, key = backend.mail, ids("ann"), ids("addr")
    assert mail.contact(ann, key) is None
    assert mail.request_confirmation(ann, key, "h1", T2, T0) is True
    assert mail.request_confirmation(ann, key, "h2", T2, T1) is False     # pending and not lapsed
    assert mail.contact(ann, key) == {"status": "pending", "token_hash": "h1", "expires_at": T2, "at": T0}
    assert mail.request_confirmation(ids("ben"), key, "h3", T2, T0) is True   # each customer its own
    assert mail.request_confirmation(ann, key, "h4", "2031-02-01T00:00:00.000Z", "2031-01-09T00:00:00.000Z") is True
    assert mail.contact(ann, key)["token_hash"] == "h4"


def test_confirming_takes_the_pending_token_before_it_lapses(backend, ids):
    mail, ann, key = backend.mail, ids("ann"), ids("addr")
    assert mail.confirm_contact(ann, key, "h1", T1) is False             # nothing pending
    mail.request_confirmation(ann, key, "h1", T2, T0)
    assert mail.confirm_contact(ann, key, "wrong", T1) is False
    assert mail.confirm_contact(ann, key, "h1", T2) is False             # at its expiry: lapsed
    assert mail.confirm_contact(ann, key, "h1", T1) is True
    assert mail.confirm_contact(ann, key, "h1", T1) is True              # a second click
    assert mail.confirm_contact(ann, key, "wrong", T1) is False
    assert mail.contact(ann, key)["status"] == "confirmed"
    assert mail.request_confirmation(ann, key, "h5", T2, "2031-03-01T00:00:00.000Z") is False   # confirmed stays


def test_a_confirmation_is_announced_in_its_own_write_once(backend, ids):
    """Issue 42, finding 6: the confirm writes ``contact.confirmed`` (an outbox item, the address
    only as its digest) with it; a second click announces nothing more."""
    mail, ann, key = backend.mail, ids("ann"), ids("addr")
    mail.request_confirmation(ann, key, "h1", T2, T0)
    assert mail.confirm_contact(ann, key, "h1", T1) is True
    assert mail.confirm_contact(ann, key, "h1", "2031-01-01T00:00:01.000Z") is True   # a second click
    announced = backend.raw(f"CUSTOMER#{ann}", f"OUTBOX#CONTACT#{key}#{T1}")
    assert {k: announced[k] for k in ("type", "customer_id", "address_key", "at")} == {
        "type": "contact.confirmed", "customer_id": ann, "address_key": key, "at": T1}
    assert backend.raw(f"CUSTOMER#{ann}", f"OUTBOX#CONTACT#{key}#2031-01-01T00:00:01.000Z") is None


def test_a_withdrawn_request_is_only_the_one_named(backend, ids):
    mail, ann, key = backend.mail, ids("ann"), ids("addr")
    mail.request_confirmation(ann, key, "h1", T2, T0)
    mail.withdraw_confirmation(ann, key, "other")
    assert mail.contact(ann, key)["token_hash"] == "h1"
    mail.withdraw_confirmation(ann, key, "h1")
    assert mail.contact(ann, key) is None
    mail.withdraw_confirmation(ann, key, "h1")                           # nothing left: no error
    mail.own_contact(ann, key, T0)
    mail.withdraw_confirmation(ann, key, "h1")
    assert mail.contact(ann, key)["status"] == "confirmed"


def test_the_hourly_count_stops_at_the_limit_and_counts_a_message_once(backend, ids):
    mail, key = backend.mail, ids("addr")
    assert [mail.count_send(key, "2031-01-01T10", f"m{i}", 2, 1_900_000_000) for i in range(3)] == [True, True, False]
    assert mail.count_send(key, "2031-01-01T10", "m1", 2, 1_900_000_000) is True     # a redelivery of a counted one
    assert mail.count_send(key, "2031-01-01T10", "m2", 2, 1_900_000_000) is False    # refused stays refused
    assert mail.count_send(key, "2031-01-01T11", "m2", 2, 1_900_000_000) is True     # the next hour
    item = backend.raw(f"MAIL#{key}", "RATE#2031-01-01T10")
    assert item["sent"] == 2 and item["ids"] == {"m0", "m1"} and item["ttl"] == 1_900_000_000
