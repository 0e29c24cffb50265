"""What the customer sees of a booking's journal (finding 12 of issue 11): status changes and
the customer's own requests and payments, never an operator's note, name or internal check.
The organizer's view keeps every entry as written."""
import json

import pytest

from holdfast.domain.statuses import BookingStatus
from holdfast.schemas import BookingIn
from holdfast.services.reviews import ReviewService

SECRET_NOTE = "fraud suspicion per chargeback desk"


@pytest.fixture
def store(fake_store):
    return fake_store


def test_operator_notes_stay_with_the_operators(bookings, payments, provider, store, ga_event):
    reviews = ReviewService(store, payments, bookings.clock)
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", BookingIn(quantity=2)).booking
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    provider.payments[payment_id]["amount"] = {"value": "3000.00", "currency": "USD"}
    payments.apply_provider_payment(provider.get_payment(payment_id))
    assert store.get_booking(booking.booking_id).status is BookingStatus.MANUAL_REVIEW
    reviews.resolve(booking.booking_id, "confirm", "olga.k", SECRET_NOTE)

    customer = bookings.view(booking.booking_id, "alice")
    text = json.dumps(customer)
    assert SECRET_NOTE not in text and "olga.k" not in text
    # The customer still learns that the booking went to review and came out confirmed.
    assert [e["to_status"] for e in customer["journal"] if e["from_status"] != e["to_status"]] == [
        "HELD", "PAYMENT_PENDING", "MANUAL_REVIEW", "CONFIRMED"]
    # The review's internal reason (a currency mismatch) is the operators' business too.
    review_entry = [e for e in customer["journal"] if e["to_status"] == "MANUAL_REVIEW"][0]
    assert "USD" not in review_entry["decision"] and "currency" not in review_entry["decision"]

    admin = reviews.booking_with_journal(booking.booking_id)
    operator = [e for e in admin["journal"] if e["actor"] == "operator"][0]
    assert operator["decision"] == f"olga.k: {SECRET_NOTE}" and operator["ids"]["operator"] == "olga.k"
    assert len(admin["journal"]) > len(customer["journal"]) - 1


def test_a_review_note_that_changes_nothing_is_not_shown(bookings, payments, provider, store, ga_event):
    reviews = ReviewService(store, payments, bookings.clock)
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", BookingIn(quantity=2)).booking
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    stray = provider.paid_stray(booking.booking_id)
    payments.apply_provider_payment(provider.get_payment(stray["id"]))
    reviews.resolve(booking.booking_id, "close", "olga.k", SECRET_NOTE)

    journal = bookings.view(booking.booking_id, "alice")["journal"]
    assert SECRET_NOTE not in json.dumps(journal) and "olga.k" not in json.dumps(journal)
    assert [e["action"] for e in journal] == ["hold_created", "payment_requested", "payment_created",
                                              "payment_succeeded"]
    admin = reviews.booking_with_journal(booking.booking_id)["journal"]
    assert [e["action"] for e in admin][-2:] == ["manual_review_opened", "review_closed"]


def entry(action, actor, source, target, decision="d", **ids):
    from holdfast.domain.booking import JournalEntry
    return JournalEntry(at="t", action=action, actor=actor, from_status=source, to_status=target,
                        decision=decision, ids={"booking_id": "b", **ids})


def test_the_rule_is_by_action_and_status_not_by_which_path_won():
    from holdfast.domain.journal import customer_view

    entries = [
        entry("hold_created", "customer", None, "HELD", idempotency_key="k"),
        entry("payment_outcome_unknown", "system", "HELD", "HELD", "ReadTimeout at 10.0.0.7"),
        entry("reconciliation_check", "reconciler", "PAYMENT_PENDING", "PAYMENT_PENDING", "next check in 30s"),
        entry("late_authorisation_cancelled", "reconciler", "EXPIRED", "EXPIRED", "places resold", payment_id="p"),
        entry("manual_review_opened", "provider", "PAYMENT_PENDING", "MANUAL_REVIEW", "amount_mismatch USD"),
        entry("review_closed", "operator", "CONFIRMED", "CONFIRMED", "olga: stray refunded", operator="olga"),
        entry("review_confirmed", "operator", "MANUAL_REVIEW", "CONFIRMED", "olga: called the bank", operator="olga"),
    ]
    shown = customer_view(entries)
    assert [e["action"] for e in shown] == ["hold_created", "late_authorisation_cancelled", "manual_review_opened",
                                            "review_confirmed"]
    assert shown[1]["decision"] == "places resold" and shown[1]["ids"] == {"booking_id": "b", "payment_id": "p"}
    assert "USD" not in shown[2]["decision"] and "olga" not in json.dumps(shown)
