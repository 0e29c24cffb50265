"""Ownership (domain/organizers.py): every object an organizer creates records it; another
organizer's object is answered exactly like one that does not exist; listings show only the
caller's own; an organizer's Idempotency-Key is its own; the journal names the organizer and key."""
from __future__ import annotations

from datetime import timedelta

import pytest

from holdfast.products.appointments.schemas import ResourceIn, ServiceIn
from holdfast.domain.errors import InvalidRequest, NotFound
from holdfast.domain.organizers import Caller
from holdfast.products.parking.schemas import LotIn, SubscriptionIn
from holdfast.schemas import BookingIn
from holdfast.products.appointments.services import AppointmentService
from holdfast.services.event_cancellation import EventCancellationService
from holdfast.products.parking.services.gate_cases import GateCases
from holdfast.services.listing import ListingService
from tests.support.fake_table import FakeTableStore
from tests.unit.conftest import event_request
from tests.unit.test_parking import SPACES, gates, parking, view_bookings  # noqa: F401 - fixtures


@pytest.fixture
def store():
    # the table's whole store in memory: the core's fake and each product's fake part
    return FakeTableStore()


ACME = Caller("org-acme", "key_acme1")
OTHER = Caller("org-other", "key_other1")


def not_found_code(call) -> str:
    with pytest.raises(NotFound) as found:
        call()
    return found.value.code


def test_the_same_idempotency_key_from_two_organizers_makes_two_events(catalog):
    first = catalog.create_event(event_request(), "launch-1", ACME)
    again = catalog.create_event(event_request(), "launch-1", ACME)
    other = catalog.create_event(event_request(), "launch-1", OTHER)
    assert again["event_id"] == first["event_id"] != other["event_id"]
    assert catalog.store.get_event(first["event_id"])["organizer_id"] == "org-acme"
    assert catalog.store.get_event(other["event_id"])["organizer_id"] == "org-other"


def test_another_organizers_event_is_answered_like_a_missing_one(catalog, store, clock):
    event = catalog.create_event(event_request(), None, ACME)
    listing = ListingService(store, clock)
    cancellation = EventCancellationService(store, clock, None)
    missing = "0b6a6d7e-2f0f-4d7e-8a8e-000000000000"
    for call in (lambda e: listing.publish(e, OTHER), lambda e: listing.update(e, {"name": "Mine now"}, OTHER),
                 lambda e: cancellation.cancel(e, "c-1", "stolen", OTHER), lambda e: cancellation.progress(e, OTHER)):
        assert not_found_code(lambda: call(event["event_id"])) == not_found_code(lambda: call(missing))
    stored = store.get_event(event["event_id"])
    assert not stored.get("published") and stored["name"] == "Club night" and not stored.get("cancelled_at")
    assert listing.publish(event["event_id"], ACME)["published"] is True


def test_cancel_keys_are_scoped_to_the_organizer(catalog, store, clock):
    mine = catalog.create_event(event_request(), None, ACME)
    theirs = catalog.create_event(event_request(), None, OTHER)
    cancellation = EventCancellationService(store, clock, None)
    cancellation.cancel(mine["event_id"], "same-key", "rain", ACME)
    # the same key for another organizer's own event is its own request, not a reuse of Acme's
    progress, replayed = cancellation.cancel(theirs["event_id"], "same-key", "rain", OTHER)
    assert progress["event_id"] == theirs["event_id"] and replayed is False


def test_lots_gates_and_subscriptions_belong_to_the_lots_organizer(parking, store):
    body = {"name": "Central", "spaces": SPACES, "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
    lot = parking.create_lot(LotIn.model_validate(body).command(), "lot-1", ACME)
    assert parking.create_lot(LotIn.model_validate(body).command(), "lot-1", OTHER)["lot_id"] != lot["lot_id"]
    gate = parking.create_gate(lot["lot_id"], "North", ACME)
    assert store.get_gate(lot["lot_id"], gate["gate_id"])["organizer_id"] == "org-acme"
    sub = SubscriptionIn.model_validate({"plate": "A1", "valid_from": "2030-01-01T00:00:00Z",
                                         "valid_to": "2030-02-01T00:00:00Z"}).command()
    parking.create_subscription(lot["lot_id"], sub, ACME)
    assert [s["organizer_id"] for s in store.subscriptions(lot["lot_id"])] == ["org-acme"]
    assert not_found_code(lambda: parking.create_gate(lot["lot_id"], "Mine", OTHER)) == "lot_not_found"
    assert not_found_code(lambda: parking.create_subscription(lot["lot_id"], sub, OTHER)) == "lot_not_found"
    assert len(store.subscriptions(lot["lot_id"])) == 1


def test_a_service_may_use_only_its_organizers_resources(store, clock, bookings):
    appointments = AppointmentService(store, clock, bookings, 600, "tests-deployment-salt")
    room = ResourceIn.model_validate({"name": "Hall", "timezone": "Europe/Moscow",
                                      "opening_hours": {"open": "09:00", "close": "21:00"}}).command()
    mine = appointments.create_resource(room, "room-1", ACME)
    assert appointments.create_resource(room, "room-1", OTHER)["resource_id"] != mine["resource_id"]
    assert store.get_resource(mine["resource_id"])["organizer_id"] == "org-acme"
    service = ServiceIn.model_validate({"name": "Yoga", "mode": "group", "capacity": 3, "duration_minutes": 60,
                                        "resource_ids": [mine["resource_id"]],
                                        "price": {"value": "700.00", "currency": "RUB"}}).command()
    with pytest.raises(InvalidRequest) as refused:
        appointments.create_service(service, "yoga", OTHER)
    assert refused.value.code == "unknown_resource"
    made = appointments.create_service(service, "yoga", ACME)
    assert store.get_event(made["service_id"])["organizer_id"] == "org-acme"


def test_reviews_show_and_let_decide_only_the_organizers_own_and_journal_who(catalog, bookings, payments, provider,
                                                                            reviews, store):
    event = catalog.create_event(event_request(), None, ACME)
    booking = bookings.create_booking(event["event_id"], "alice", "a-1", BookingIn(quantity=1)).booking
    payment_id = payments.start_payment(booking.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    provider.payments[payment_id]["amount"] = {"value": "1.00", "currency": "RUB"}
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "amount_mismatch"
    assert [r["booking_id"] for r in reviews.open_reviews(ACME)] == [booking.booking_id]
    assert reviews.open_reviews(OTHER) == []
    missing = "0b6a6d7e-2f0f-4d7e-8a8e-000000000000"
    for call in (lambda b: reviews.booking_with_journal(b, OTHER),
                 lambda b: reviews.resolve(b, "refund", "mallory", "mine", caller=OTHER)):
        assert not_found_code(lambda: call(booking.booking_id)) == not_found_code(lambda: call(missing))
    assert store.get_booking(booking.booking_id).status.value == "MANUAL_REVIEW"
    reviews.resolve(booking.booking_id, "refund", "olga", "wrong amount", caller=ACME)
    journal = reviews.booking_with_journal(booking.booking_id, ACME)["journal"]
    decided = [e for e in journal if e["action"].startswith("review_")]
    assert decided and all(e["ids"]["organizer_id"] == "org-acme" and e["ids"]["key_id"] == "key_acme1"
                           for e in decided)


def test_gate_cases_show_and_let_resolve_only_the_lots_organizer(parking, gates, store, clock):  # noqa: F811
    body = {"name": "Tiny", "spaces": [SPACES[0]], "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
    lot = parking.create_lot(LotIn.model_validate(body).command(), None, ACME)
    gate = parking.create_gate(lot["lot_id"], "Main", ACME)
    at = clock()
    gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "in-1", "plate": "D1"}, at=at, offline=False)
    refused = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "in-2", "plate": "D2"},
                          at=at + timedelta(seconds=1), offline=True)
    identity = refused["conflict"]["case_id"]
    cases = GateCases(store, clock)
    assert [c["case_id"] for c in cases.open_cases(ACME)] == [identity] and cases.open_cases(OTHER) == []
    assert not_found_code(lambda: cases.resolve(identity, "vehicle_left", "mallory", "x", OTHER)) == \
        "gate_case_not_found"
    done = cases.resolve(identity, "vehicle_left", "anna", "left", ACME)
    assert done["journal"][-1]["ids"] == {"organizer_id": "org-acme", "key_id": "key_acme1"}


def test_the_cancellation_jobs_journal_names_the_organizer_and_key_that_cancelled(catalog, bookings, payments,
                                                                                    provider, store, clock):
    from holdfast.services.cancellation_job import CancellationJob
    from tests.unit.test_event_cancellation import hold, paid, run_job

    event = catalog.create_event(event_request(), None, ACME)
    held = hold(bookings, event, "alice")
    sold, _ = paid(bookings, payments, provider, event, "bob")
    EventCancellationService(store, clock, None).cancel(event["event_id"], "cancel-1", "storm", ACME)
    run_job(CancellationJob(store, payments, clock), event["event_id"])
    for booking_id, action in ((held.booking_id, "event_cancelled_hold_released"),
                               (sold, "event_cancelled_refund_started")):
        [entry] = [e for e in store.get_booking_with_journal(booking_id)[1] if e.action == action]
        assert (entry.ids["organizer_id"], entry.ids["key_id"]) == ("org-acme", "key_acme1")


def test_a_rotated_or_deleted_gate_key_is_401_and_only_the_lots_organizer_may_do_either(parking, store):  # noqa: F811
    from holdfast.products.parking.services.lots import GateUnauthorized

    body = {"name": "Central", "spaces": SPACES, "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
    lot = parking.create_lot(LotIn.model_validate(body).command(), None, ACME)
    gate = parking.create_gate(lot["lot_id"], "North", ACME)
    lot_id, gate_id = lot["lot_id"], gate["gate_id"]
    assert not_found_code(lambda: parking.rotate_gate_key(lot_id, gate_id, OTHER)) == "lot_not_found"
    assert not_found_code(lambda: parking.delete_gate(lot_id, gate_id, OTHER)) == "lot_not_found"
    assert parking.gate(lot_id, gate_id, gate["gate_key"])["gate_id"] == gate_id
    rotated = parking.rotate_gate_key(lot_id, gate_id, ACME)
    with pytest.raises(GateUnauthorized):
        parking.gate(lot_id, gate_id, gate["gate_key"])
    assert parking.gate(lot_id, gate_id, rotated["gate_key"])["gate_id"] == gate_id
    parking.delete_gate(lot_id, gate_id, ACME)
    parking.delete_gate(lot_id, gate_id, ACME)          # a repeat changes nothing
    with pytest.raises(GateUnauthorized):
        parking.gate(lot_id, gate_id, rotated["gate_key"])
    assert not_found_code(lambda: parking.rotate_gate_key(lot_id, gate_id, ACME)) == "gate_not_found"
    assert not_found_code(lambda: parking.delete_gate(lot_id, "no-such-gate", ACME)) == "gate_not_found"


def test_a_deleted_gates_synced_passes_are_refused_each_with_one_case(parking, store, clock):  # noqa: F811
    from holdfast.products.parking.services.retired_gates import refuse_passes

    body = {"name": "Central", "spaces": SPACES, "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
    lot = parking.create_lot(LotIn.model_validate(body).command(), None, ACME)
    gate = parking.create_gate(lot["lot_id"], "North", ACME)
    parking.delete_gate(lot["lot_id"], gate["gate_id"], ACME)
    assert parking.gate(lot["lot_id"], gate["gate_id"], gate["gate_key"], deleted_too=True)["deleted_at"]
    passes = [{"seq": 7, "event_id": "off-1", "kind": "entry", "at": "2030-01-01T11:00:00.000Z", "plate": "A1"},
              {"seq": 8, "event_id": "off-2", "kind": "exit", "at": "2030-01-01T11:30:00.000Z", "plate": "B2"}]
    answer = refuse_passes(store, clock, store.get_gate(lot["lot_id"], gate["gate_id"]), lot["lot_id"], gate["gate_id"],
                           passes)
    assert answer["expected_seq"] == 9 and [r["status"] for r in answer["results"]] == ["failed", "failed"]
    assert refuse_passes(store, clock, store.get_gate(lot["lot_id"], gate["gate_id"]), lot["lot_id"], gate["gate_id"],
                           passes) == answer   # a repeat
    cases = GateCases(store, clock).open_cases(ACME)
    assert sorted((c["case_type"], c["reason"], c["plate"]) for c in cases) == \
        [("entry", "gate_deleted", "A1"), ("exit", "gate_deleted", "B2")]
    assert {r["conflict"]["case_id"] for r in answer["results"]} == {c["case_id"] for c in cases}
    assert GateCases(store, clock).open_cases(OTHER) == []


def test_sales_list_only_the_organizers_own_offerings_with_counts(catalog, parking, store, clock, bookings):  # noqa: F811
    mine = catalog.create_event(event_request(), "night", ACME)
    catalog.create_event(event_request(name="Theirs"), "night", OTHER)
    lot = parking.create_lot(LotIn.model_validate({"name": "Central", "spaces": SPACES, "tariff": {
        "hourly": {"value": "100.00", "currency": "RUB"}}}).command(), None, ACME)
    bookings.create_booking(mine["event_id"], "alice", "a-1", BookingIn(quantity=2))
    sales = catalog.sales(ACME)
    assert {s["event_id"] for s in sales} == {mine["event_id"], lot["lot_id"]}
    [night] = [s for s in sales if s["event_id"] == mine["event_id"]]
    assert night["counts"]["held"] == 2 and night["published"] is False
    assert [s["name"] for s in catalog.sales(OTHER)] == ["Theirs"]
    assert catalog.sales(Caller("org-none", "k")) == []


def test_open_gate_cases_are_each_organizers_own_partition_read_a_page_at_a_time(parking, store, clock):  # noqa: F811
    """Finding 9 of issue 42: every organizer's GET /admin/reviews used to read one partition of
    every open case and filter it. A case is now indexed under its lot's organizer; a page reads
    that partition only, and a cursor of one organizer's list is refused in another's."""
    from holdfast.products.parking.services.retired_gates import refuse_passes

    body = {"name": "Central", "spaces": SPACES, "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}
    mine, theirs = (parking.create_lot(LotIn.model_validate(body).command(), None, who) for who in (ACME, OTHER))
    for lot, who, count in ((mine, ACME, 5), (theirs, OTHER, 3)):
        gate = parking.create_gate(lot["lot_id"], "North", who)
        parking.delete_gate(lot["lot_id"], gate["gate_id"], who)
        passes = [{"seq": seq, "event_id": f"p-{seq}", "kind": "entry", "at": "2030-01-01T11:00:00.000Z",
                   "plate": f"P{seq}"} for seq in range(1, count + 1)]
        refuse_passes(store, clock, store.get_gate(lot["lot_id"], gate["gate_id"]), lot["lot_id"], gate["gate_id"],
                      passes)
    indexed = {item["gsi1pk"] for item in store.table.items.values() if str(item.get("pk", "")).startswith("GATECASE#")}
    assert indexed == {"GATECASE#org-acme", "GATECASE#org-other"}

    cases = GateCases(store, clock, organizers=lambda: ["org-acme", "org-other"])
    seen, cursor, pages = [], None, 0
    while True:
        page = cases.open_page(ACME, 2, cursor)
        seen += page["cases"]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages >= 3 and len(seen) == 5 and {c["lot_id"] for c in seen} == {mine["lot_id"]}
    other_cursor = cases.open_page(OTHER, 1)["next_cursor"]
    with pytest.raises(InvalidRequest) as refused:
        cases.open_page(ACME, 2, other_cursor)
    assert refused.value.code == "invalid_cursor"
    with pytest.raises(InvalidRequest):
        cases.open_page(ACME, 0)
    assert len(cases.open_cases()) == 8 and len(cases.open_cases(OTHER)) == 3
