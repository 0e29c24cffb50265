"""Personal data (issue 34, finding 7): a booking's contact address, plate, customer id and what
the customer typed are erased once it has ended and the retention period passed, or when the
customer asks; the journal keeps ids, statuses and times; the money records stay."""
from __future__ import annotations

from datetime import timedelta

import pytest

from holdfast.adapters.codec import _plain
from holdfast.clock import iso
from holdfast.domain.booking import JournalEntry
from holdfast.domain.errors import Conflict
from holdfast.domain.personal_data import erased, erased_entry, pseudonym
from holdfast.schemas import BookingIn
from holdfast.services.personal_data import PersonalDataService
from tests.unit.test_parking import gates, make_lot, parking, reserve, view_bookings  # noqa: F401 - its fixtures

KEY = b"unit-pseudonym-key"
EMAIL = "alice.private@example.com"


@pytest.fixture
def personal(store, clock):
    return PersonalDataService(store, clock, KEY, retention_days=90)


def _items(store):
    """Every item of the table, read directly (a test may scan; no request path does)."""
    items, kwargs = [], {"TableName": store.table}
    while True:
        page = store.client.scan(**kwargs)
        items += [_plain(item) for item in page["Items"]]
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _naming(store, *words):
    return [item for item in _items(store) if any(word in repr(item) for word in words)]


def _paid(bookings, payments, provider, event, customer="alice", key="k"):
    booking = bookings.create_booking(event["event_id"], customer, key,
                                      BookingIn(quantity=1, contact_email=EMAIL)).booking
    payment_id = payments.start_payment(booking.booking_id, customer, f"pay-{key}").payment.payment_id
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    return booking.booking_id, payment_id


def test_a_confirmed_booking_is_erased_once_the_retention_after_its_event_has_passed(
        store, bookings, payments, provider, ga_event, clock, personal):
    first, payment_id = _paid(bookings, payments, provider, ga_event, key="k1")
    second, _ = _paid(bookings, payments, provider, ga_event, key="k2")
    starts = clock.now.replace(month=2, day=1, hour=20)   # the event's start (conftest)

    clock.now = starts + timedelta(days=89)
    assert personal.erase_ended()["erased"] == 0, "the retention counts from the event, not the payment"
    assert _naming(store, "alice", EMAIL)

    clock.now = starts + timedelta(days=91)
    assert personal.erase_ended(limit=1) == {"erased": 1, "skipped": 0, "failed": 0}   # one page
    assert personal.erase_ended() == {"erased": 1, "skipped": 0, "failed": 0}          # resumes
    assert personal.erase_ended() == {"erased": 0, "skipped": 0, "failed": 0}

    # nothing left names the customer but the payment's own idempotency records (a day's TTL)
    left = _naming(store, "alice", EMAIL)
    assert all(item["pk"].startswith("IDEM#alice#pay-") and "ttl" in item for item in left), left
    one, two = store.get_booking(first), store.get_booking(second)
    assert one.customer_id == two.customer_id == pseudonym(KEY, "alice") != pseudonym(b"other", "alice")
    assert one.contact_email is None and one.erased_at
    # the money records stay
    assert one.payment.payment_id == payment_id and one.payment.provider_status == "succeeded"
    assert one.amount.text == "1500.00" and one.status.value == "CONFIRMED"
    _, journal = store.get_booking_with_journal(first)
    assert [entry.action for entry in journal][-1] == "personal_data_erased"
    assert all(entry.decision == "" and "idempotency_key" not in entry.ids for entry in journal)
    assert any(entry.ids.get("payment_id") == payment_id for entry in journal)


def test_an_expired_hold_counts_from_its_last_change(store, bookings, ga_event, clock, personal):
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", BookingIn(quantity=1)).booking
    clock.advance(700)
    assert bookings.expire(booking.booking_id)["outcome"] == "expired"
    clock.advance(89 * 86_400)
    assert personal.erase_ended()["erased"] == 0
    clock.advance(2 * 86_400)
    assert personal.erase_ended()["erased"] == 1
    assert store.get_booking(booking.booking_id).customer_id.startswith("erased-")


def test_the_customer_sees_their_bookings_with_journal_and_personal_fields(
        store, bookings, payments, provider, ga_event, personal):
    booking_id, payment_id = _paid(bookings, payments, provider, ga_event)
    bookings.create_booking(ga_event["event_id"], "bob", "k", BookingIn(quantity=1))
    data = personal.export("alice")
    [mine] = data["bookings"]
    assert mine["booking_id"] == booking_id and mine["contact_email"] == EMAIL
    assert mine["payment"]["payment_id"] == payment_id
    assert [entry["action"] for entry in mine["journal"]][0] == "hold_created"
    assert personal.export("nobody")["bookings"] == []


def test_erasure_on_request_is_refused_while_a_booking_is_live(store, bookings, payments, provider, ga_event,
                                                                 clock, personal):
    booking_id, _ = _paid(bookings, payments, provider, ga_event)   # its event is still to come
    with pytest.raises(Conflict) as refused:
        personal.forget("alice")
    assert refused.value.code == "bookings_active" and refused.value.details["bookings"] == [booking_id]
    assert store.get_booking(booking_id).contact_email == EMAIL, "nothing erased"


def test_erasure_on_request_erases_ended_bookings_now_and_repeats_harmlessly(
        store, bookings, payments, provider, ga_event, clock, personal):
    booking_id, payment_id = _paid(bookings, payments, provider, ga_event)
    clock.now = clock.now.replace(month=2, day=2)   # the day after the event
    assert personal.forget("alice") == {"erased": 1}
    assert personal.forget("alice") == {"erased": 0}
    assert personal.export("alice")["bookings"] == []
    booking = store.get_booking(booking_id)
    assert booking.contact_email is None and booking.payment.payment_id == payment_id


def test_a_kinds_personal_details_and_typed_fields_go_and_the_rest_stays(store, bookings, ga_event, clock):
    booking = bookings.create_booking(ga_event["event_id"], "alice", "k", BookingIn(quantity=1)).booking
    from dataclasses import replace

    booking = replace(booking, kind_details={"plate": "A123BC77", "permit": "P-1", "space_id": "R1"},
                      resolution={"reason": "places_gone", "decision": {"choice": "seat", "fields": {"note": "mine"},
                                                                        "key": "my key", "by": "customer"}})
    after = erased(booking, KEY, "2030-06-01T00:00:00.000Z", ("plate", "permit"))
    assert after.kind_details == {"space_id": "R1"}
    assert after.resolution == {"reason": "places_gone", "decision": {"choice": "seat", "by": "customer"}}
    assert after.version == booking.version + 1
    entry = JournalEntry(at="t", action="hold_created", actor="customer", from_status=None, to_status="HELD",
                         decision="plate A123BC77 held", ids={"booking_id": "b", "idempotency_key": "k",
                                                               "plate": "A123BC77", "payment_id": "p"})
    assert erased_entry(entry).ids == {"booking_id": "b", "payment_id": "p"} and erased_entry(entry).decision == ""


def test_a_parking_reservation_loses_its_plate_and_knows_its_window_end(store, bookings, clock, personal, parking):
    lot = make_lot(parking)
    booking = reserve(parking, lot, plate="A123BC77")
    assert booking.ends_at == "2030-01-02T11:30:00.000Z", "the start of its last half-hour granule"
    clock.advance(700)
    assert bookings.expire(booking.booking_id)["outcome"] == "expired"
    assert personal.forget("alice") == {"erased": 1}
    after = store.get_booking(booking.booking_id)
    assert "plate" not in after.kind_details and after.kind_details["space_id"]
    assert not _naming(store, "A123BC77")


def test_a_booking_written_before_ends_at_existed_ends_with_its_event(store, bookings, payments, provider, ga_event,
                                                                         clock, personal):
    booking_id, _ = _paid(bookings, payments, provider, ga_event)
    store.client.update_item(TableName=store.table, Key={"pk": {"S": f"BOOKING#{booking_id}"}, "sk": {"S": "META"}},
                             UpdateExpression="REMOVE ends_at")
    assert store.get_booking(booking_id).ends_at is None
    with pytest.raises(Conflict):
        personal.forget("alice")   # its event is still to come
    clock.now = clock.now.replace(month=2, day=2)
    assert personal.forget("alice") == {"erased": 1}
    assert store.get_booking(booking_id).ends_at == "2030-02-01T20:00:00.000Z"


def test_erasure_on_request_takes_the_customers_standing_with_addresses_too(
        store, bookings, payments, provider, ga_event, clock, personal):
    """The mail policy's CONTACT# items name the customer and an address's digest (issue 33); the
    suppression list is the address's, not the customer's, and stays so its bounce is honoured."""
    from holdfast.adapters.mail_policy_store import MailPolicyStore
    from holdfast.services.mail_policy import address_key

    mail, own, other = MailPolicyStore(store.table, store.client), address_key(EMAIL), address_key("o@example.org")
    mail.own_contact("alice", own, "2030-01-01T00:00:00.000Z")
    mail.request_confirmation("alice", other, "h", "2031-01-08T00:00:00.000Z", "2030-01-01T00:00:00.000Z")
    mail.suppress(other, "bounce", "2030-01-01T00:00:00.000Z")
    third = address_key("t@example.org")   # confirmed: its announcement (issue 42, finding 6) names its digest
    mail.request_confirmation("alice", third, "h3", "2031-01-08T00:00:00.000Z", "2030-01-01T00:00:00.000Z")
    assert mail.confirm_contact("alice", third, "h3", "2030-01-02T00:00:00.000Z")
    _paid(bookings, payments, provider, ga_event)
    clock.now = clock.now.replace(month=2, day=2)
    assert personal.forget("alice") == {"erased": 1}
    assert mail.contact("alice", own) is None and mail.contact("alice", other) is None
    assert mail.is_suppressed(other)
    assert not _naming(store, third), "nothing names an address of hers but the suppression list"


def test_a_reservation_s_ticket_and_gate_case_lose_the_plate_and_customer_with_it(
        store, bookings, payments, provider, clock, personal, parking, gates):
    from tests.unit.test_parking import confirm

    lot = make_lot(parking)
    gate = parking.create_gate(lot["lot_id"], "North")
    lot_id, gate_id = lot["lot_id"], gate["gate_id"]
    booking = reserve(parking, lot, plate="K777KK77", customer="kate")
    confirm(payments, provider, booking)
    clock.now = clock.now.replace(day=2, hour=10, minute=0)
    came = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "in", "plate": "K777KK77"}, at=clock(),
                       offline=False)
    assert came["gate_open"] is True and store.get_ticket(came["ticket_id"])["customer_id"] == "kate"
    # the gate, offline, let the reservation in again: refused with a case naming the booking and plate
    again = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "in-2", "plate": "K777KK77",
                                          "booking_id": booking.booking_id}, at=clock(), offline=True)
    assert again["conflict"]["reason"] == "already_inside"
    clock.now = clock.now.replace(hour=11)
    assert gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "out", "plate": "K777KK77"}, at=clock(),
                       offline=False)["exit_granted"] is True
    assert {item["pk"].split("#")[0] for item in _naming(store, "K777KK77")} >= {"TICKET", "GATECASE"}

    clock.now = clock.now.replace(month=3)
    assert personal.forget("kate") == {"erased": 1}
    assert _naming(store, "K777KK77", "kate") == []
    assert store.get_ticket(came["ticket_id"])["booking_id"] == booking.booking_id    # the money's trail stays


def test_a_car_inside_keeps_its_reservation_live_past_its_window_until_it_leaves(
        store, bookings, payments, provider, clock, personal, parking, gates):
    """Issue 42, finding 1: a checked-in reservation whose last half hour had begun counted as
    ended, so erasure took the plate of a car still parked; checked in is live until the exit."""
    from tests.unit.test_parking import confirm

    lot = make_lot(parking)
    gate = parking.create_gate(lot["lot_id"], "North")
    booking = reserve(parking, lot, plate="K777KK77", customer="kate")   # 10:00-12:00
    confirm(payments, provider, booking)
    clock.now = clock.now.replace(day=2, hour=10, minute=0)
    came = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "in", "plate": "K777KK77"},
                       at=clock(), offline=False)
    assert came["gate_open"] is True
    for moment in (clock.now.replace(hour=11, minute=40), clock.now.replace(hour=11, minute=59)):   # its last half hour
        clock.now = moment
        with pytest.raises(Conflict) as refused:
            personal.forget("kate")
        assert refused.value.details["bookings"] == [booking.booking_id]
        assert personal.erase_ended() == {"erased": 0, "skipped": 0, "failed": 0}
    assert store.get_ticket(came["ticket_id"])["plate"] == "K777KK77"
    left = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "out", "ticket_id": came["ticket_id"]},
                       at=clock(), offline=False)
    assert left["exit_granted"] is True
    clock.now = clock.now.replace(month=3)
    assert personal.forget("kate") == {"erased": 1}


def test_an_erased_ticket_still_leaves_and_an_unreadable_offline_pass_becomes_a_case(
        store, bookings, payments, provider, clock, personal, parking, gates):
    """No exit path reads a field erasure may remove without handling its absence, and an offline
    pass the code cannot apply is a gate case, never a 500 the gate would resend for ever."""
    from tests.unit.test_parking import confirm

    lot = make_lot(parking)
    gate = parking.create_gate(lot["lot_id"], "North")
    lot_id, gate_id = lot["lot_id"], gate["gate_id"]
    booking = reserve(parking, lot, plate="K777KK77", customer="kate")
    confirm(payments, provider, booking)
    clock.now = clock.now.replace(day=2, hour=10, minute=0)
    came = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "in", "plate": "K777KK77"}, at=clock(),
                       offline=False)
    # a ticket erased as it would have been before the fix (its plate gone)
    store.client.update_item(TableName=store.table, Key={"pk": {"S": f"TICKET#{came['ticket_id']}"}, "sk": {"S": "META"}},
                             UpdateExpression="REMOVE plate, customer_id")
    assert "plate" not in store.get_ticket(came["ticket_id"])
    clock.now = clock.now.replace(hour=11)
    left = gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "out", "ticket_id": came["ticket_id"]},
                       at=clock(), offline=True)
    assert left["exit_granted"] is True

    def broken(*args, **kwargs):
        raise KeyError("plate")

    gates._exit = broken
    answer = gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "out-2", "ticket_id": came["ticket_id"]},
                         at=clock(), offline=True)
    assert answer["exit_granted"] is False and answer["conflict"]["reason"] == "pass_not_applicable"
    with pytest.raises(KeyError):   # online the gate is told nothing was decided and stays shut
        gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "out-3", "ticket_id": came["ticket_id"]},
                    at=clock(), offline=False)


def test_a_postponed_event_is_not_over_at_its_old_start(store, bookings, payments, provider, ga_event, clock,
                                                        personal):
    """Issue 42, finding 2: PATCH of a later start left each booking's end at the old start, so
    erasure on request and the retention sweep treated a booking for an event months ahead as over."""
    from holdfast.services.listing import ListingService

    booking_id, _ = _paid(bookings, payments, provider, ga_event)
    old_start = clock.now.replace(month=2, day=1, hour=20)
    ListingService(store, clock).update(ga_event["event_id"], {"starts_at": old_start.replace(month=8)})
    clock.now = old_start + timedelta(days=1)
    with pytest.raises(Conflict):
        personal.forget("alice")
    clock.now = old_start + timedelta(days=91)
    assert personal.erase_ended() == {"erased": 0, "skipped": 1, "failed": 0}
    # the index of ended bookings moved it to its new end: the next sweep does not read it again
    assert personal.erase_ended() == {"erased": 0, "skipped": 0, "failed": 0}
    assert store.get_booking(booking_id).contact_email == EMAIL
    assert store.get_booking(booking_id).ends_at == "2030-08-01T20:00:00.000Z"
    clock.now = old_start.replace(month=8) + timedelta(days=91)
    assert personal.erase_ended()["erased"] == 1


def test_an_erased_reservation_shows_no_pass_and_its_late_message_is_composed(store, bookings, payments, provider,
                                                                              clock, personal, parking):
    """A message composed after the erasure (the notifier works from the stream, later) read the
    pass's plate and failed for ever; an erased reservation shows no pass."""
    from dataclasses import replace as replaced

    from holdfast import kinds
    from tests.unit.test_parking import confirm

    lot = make_lot(parking)
    booking = reserve(parking, lot, plate="K777KK77", customer="kate")
    confirm(payments, provider, booking)
    erased_one = replaced(store.get_booking(booking.booking_id), kind_details={"space_id": "R1"}, erased_at="2030-03-01")
    kind = kinds.named("parking")
    assert kind.pass_token(erased_one, lambda: (_ for _ in ()).throw(AssertionError("no key is needed"))) is None
    assert "entry_token" not in kind.view_extras(erased_one, None)


def test_the_export_shows_what_the_booking_view_shows_of_operators(store, bookings, payments, provider, ga_event,
                                                                    clock, personal):
    """Issue 42, finding 7: GET /customers/me/data showed operators' names, keys and internal notes
    that the booking's own view hides; it shows the journal as the view does."""
    from holdfast.services import transitions

    booking_id, _ = _paid(bookings, payments, provider, ga_event)
    transitions.apply(store, store.get_booking(booking_id), clock(), actor="operator", action="review_note",
                      decision="internal: called the bank, card looks stolen", ids={"organizer_id": "org-1",
                                                                                    "key_id": "key-7"})
    text = repr(personal.export("alice"))
    assert "card looks stolen" not in text and "key-7" not in text and "org-1" not in text
    assert personal.export("alice")["bookings"][0]["journal"] == bookings.view(booking_id, "alice")["journal"]


def test_erasure_while_a_waitlist_offer_is_in_flight_is_refused_and_makes_no_booking_after_it(
        store, bookings, catalog, clock, personal):
    """Issue 42, finding 7: the relay claimed the customer's turn (PENDING offer) and crashed
    before the hold; a DELETE /customers/me then answered 204 and left the turn, and the relay's
    next pass made a booking under the erased customer's id. The erasure now refuses (409
    ``offer_pending``) and erases nothing while an offer is in flight; a waiting turn leaves the
    line first, so no relay can claim it after."""
    from holdfast.services.waitlist import WaitlistService
    from tests.unit.conftest import event_request

    event = catalog.create_event(event_request(capacity=2))
    event_id = event["event_id"]
    waitlist = WaitlistService(store, bookings, clock)
    taken = bookings.create_booking(event_id, "bob", "k-bob", BookingIn(quantity=2)).booking
    waitlist.join(event_id, "alice", 1, contact_email=EMAIL)
    clock.now += timedelta(seconds=1)   # first come, first served: alice heads the line
    waitlist.join(event_id, "carol", 1)
    bookings.cancel(taken.booking_id, "bob")
    head = store.waitlist_head(event_id)
    assert head["customer_id"] == "alice"
    assert store.waitlist_claim(event_id, head, iso(clock()))   # the relay's claim; it died before the hold

    with pytest.raises(Conflict) as refused:
        personal.forget("alice")
    assert refused.value.code == "offer_pending" and refused.value.details["events"] == [event_id]
    assert personal.forget("carol") == {"erased": 0}, "a waiting turn leaves the line"

    made = waitlist.advance(event_id)   # the relay's next pass finishes the claimed offer
    assert [store.get_booking(booking_id).customer_id for booking_id in made] == ["alice"]
    assert store.get_booking(made[0]).contact_email == EMAIL, "nothing of alice's was erased"
    assert store.waitlist_entry(event_id, "carol") is None and store.waitlist_head(event_id) is None
    assert store.customer_booking_ids("carol", event_id) == [], "no booking is made for the one erased"
