"""Appointment services on the table's fake store (tests/support/fake_table.py, held to the adapter
on moto and DynamoDB Local by tests/contract/storage/): resources, services, a day's availability,
and holds of a time through the one hold path (seats of a group session, or a whole resource),
with their payment, expiry and cancellation through the unchanged engine."""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from holdfast.products.appointments.schemas import ResourceIn, ServiceIn, SlotBookingIn
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import Conflict, IdempotencyKeyReused, InvalidRequest, NotFound
from holdfast.products.appointments.kind import SlotUnavailable
from holdfast.products.appointments.timeslots import GRANULE_MINUTES, OpeningHours, day_slots, zone
from holdfast.products.appointments.services import AppointmentService
from tests.support.fake_table import FakeTableStore

DAY = "2030-01-02"   # the clock stands at 2030-01-01 12:00 UTC
MSK = "+03:00"


@pytest.fixture
def store():
    return FakeTableStore()


@pytest.fixture
def appointments(store, clock, bookings):
    return AppointmentService(store, clock, bookings, 600, id_salt="tests-deployment-salt")


@pytest.fixture
def room(appointments):
    return appointments.create_resource(ResourceIn.model_validate(
        {"name": "Hall A", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "21:00"}}).command())


def service(appointments, room, **overrides):
    body = {"name": "Yoga", "mode": "group", "capacity": 3, "duration_minutes": 60,
            "resource_ids": [room["resource_id"]], "price": {"value": "700.00", "currency": "RUB"}}
    body.update(overrides)
    body = {key: value for key, value in body.items() if value is not None}
    return appointments.create_service(ServiceIn.model_validate(body).command())


def book(appointments, svc, room, customer, at, quantity=None, key=None):
    body = {"starts_at": f"{DAY}T{at}:00{MSK}", "resource_id": room["resource_id"]}
    if quantity is not None:
        body["quantity"] = quantity
    return appointments.book(svc["service_id"], customer, key or f"{customer}-{at}",
                             HoldPlaces.of(SlotBookingIn.model_validate(body))).booking


def free_at(appointments, svc, at):
    slots = appointments.availability(svc["service_id"], DAY)["slots"]
    wanted = datetime.fromisoformat(f"{DAY}T{at}:00{MSK}").astimezone(timezone.utc)
    [slot] = [s for s in slots if datetime.fromisoformat(s["starts_at"].replace("Z", "+00:00")) == wanted]
    return slot["available"]


def test_a_group_session_sells_its_seats_and_no_more(appointments, room):
    yoga = service(appointments, room)
    first = book(appointments, yoga, room, "alice", "10:00", quantity=2)
    assert first.status.value == "HELD" and first.amount.text == "1400.00"
    assert free_at(appointments, yoga, "10:00") == 1
    with pytest.raises(SlotUnavailable) as refused:
        book(appointments, yoga, room, "bob", "10:00", quantity=2)
    assert refused.value.code == "slot_unavailable" and refused.value.details["available"] == 1
    # The nearest free times of the day are offered, nearest first.
    assert refused.value.details["nearby"][0]["starts_at"] in ("2030-01-02T06:00:00.000Z", "2030-01-02T08:00:00.000Z")
    book(appointments, yoga, room, "bob", "10:00", quantity=1)
    assert free_at(appointments, yoga, "10:00") == 0


def test_group_and_private_exclude_each_other_on_one_resource(appointments, room):
    yoga = service(appointments, room)
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None, duration_minutes=90,
                   step_minutes=30)
    book(appointments, yoga, room, "alice", "10:00")
    # 09:30-11:00 overlaps the session in use; 11:00-12:30 is adjacent and free.
    with pytest.raises(SlotUnavailable):
        book(appointments, hire, room, "bob", "09:30")
    assert free_at(appointments, hire, "09:30") == 0
    private = book(appointments, hire, room, "bob", "11:00")
    assert private.places.quantity == 1 and len(private.places.granules) == 90 // GRANULE_MINUTES
    with pytest.raises(SlotUnavailable):
        book(appointments, yoga, room, "carol", "11:00")
    assert free_at(appointments, yoga, "12:00") == 0   # 12:00-13:00 overlaps 11:00-12:30


def test_overlapping_private_bookings_never_both_succeed_adjacent_ones_do(appointments, room):
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None, duration_minutes=60,
                   step_minutes=30)
    book(appointments, hire, room, "alice", "10:00")
    with pytest.raises(SlotUnavailable):
        book(appointments, hire, room, "bob", "10:30")
    with pytest.raises(SlotUnavailable):
        book(appointments, hire, room, "bob", "09:30")
    book(appointments, hire, room, "bob", "11:00")
    book(appointments, hire, room, "carol", "09:00")


def test_releasing_every_seat_of_a_session_frees_the_resource(appointments, room, bookings, clock):
    yoga = service(appointments, room)
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None)
    one = book(appointments, yoga, room, "alice", "10:00")
    two = book(appointments, yoga, room, "bob", "10:00")
    bookings.cancel(one.booking_id, "alice")
    with pytest.raises(SlotUnavailable):
        book(appointments, hire, room, "carol", "10:00")
    clock.advance(601)
    assert bookings.expire(two.booking_id)["outcome"] == "expired"
    assert free_at(appointments, hire, "10:00") == 1
    assert book(appointments, hire, room, "carol", "10:00").status.value == "HELD"


def test_a_held_time_is_paid_and_confirmed_through_the_unchanged_payment_path(appointments, room, bookings,
                                                                               payments, provider):
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None)
    assert hire["payment_mode"] == "two_stage"
    held = book(appointments, hire, room, "alice", "10:00")
    payment_id = payments.start_payment(held.booking_id, "alice", "p").payment.payment_id
    provider.pay(payment_id)
    assert provider.payments[payment_id]["status"] == "waiting_for_capture"
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"
    view = bookings.view(held.booking_id, "alice")
    assert view["status"] == "CONFIRMED" and provider.payments[payment_id]["status"] == "succeeded"
    assert view["places"] == {"kind": "slots", "quantity": 1, "resource_id": room["resource_id"], "mode": "private",
                              "starts_at": "2030-01-02T07:00:00.000Z", "ends_at": "2030-01-02T08:00:00.000Z"}
    assert free_at(appointments, hire, "10:00") == 0
    # A confirmed booking cancelled with a refund gives the time back.
    bookings.cancel(held.booking_id, "alice", refund=payments.cancel_confirmed)
    assert free_at(appointments, hire, "10:00") == 1


def test_a_repeated_click_returns_the_same_booking(appointments, room):
    yoga = service(appointments, room)
    first = book(appointments, yoga, room, "alice", "10:00", key="k")
    again = book(appointments, yoga, room, "alice", "10:00", key="k")
    assert again.booking_id == first.booking_id
    assert free_at(appointments, yoga, "10:00") == 2
    with pytest.raises(IdempotencyKeyReused):
        book(appointments, yoga, room, "alice", "11:00", key="k")


@pytest.mark.parametrize("at, quantity, code", [
    ("08:00", None, "slot_not_offered"),     # before opening
    ("20:30", None, "slot_not_offered"),     # would end after closing
    ("10:15", None, "slot_not_offered"),     # off the step
    ("10:00", 4, "invalid_quantity"),        # over the session's capacity
    ("10:00", 0, "invalid_quantity"),
])
def test_a_time_the_service_does_not_offer_is_refused(appointments, room, at, quantity, code):
    yoga = service(appointments, room)
    with pytest.raises(InvalidRequest) as refused:
        book(appointments, yoga, room, "alice", at, quantity=quantity)
    assert refused.value.code == code


def test_private_quantity_unknown_resource_past_time_and_bad_dates_are_refused(appointments, room, clock):
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None)
    with pytest.raises(InvalidRequest) as refused:
        book(appointments, hire, room, "alice", "10:00", quantity=1)
    assert refused.value.code == "quantity_not_supported"
    with pytest.raises(InvalidRequest) as refused:
        appointments.book(hire["service_id"], "alice", "x", HoldPlaces.of(SlotBookingIn.model_validate(
            {"starts_at": f"{DAY}T10:00:00{MSK}", "resource_id": "no-such-room"})))
    assert refused.value.code == "unknown_resource"
    clock.now = datetime(2030, 1, 2, 8, 0, tzinfo=timezone.utc)   # 11:00 in Moscow
    with pytest.raises(InvalidRequest) as refused:
        book(appointments, hire, room, "alice", "10:00")
    assert refused.value.code == "slot_in_past"
    # Slots that have begun are not offered at all.
    assert [s["starts_at"] for s in appointments.availability(hire["service_id"], DAY)["slots"]][0] == \
        "2030-01-02T09:00:00.000Z"
    for text in ("2030-13-01", "tomorrow", "", None, "2030-1-2"):
        with pytest.raises(InvalidRequest) as refused:
            appointments.availability(hire["service_id"], text)
        assert refused.value.code == "invalid_date"
    with pytest.raises(NotFound):
        appointments.availability("no-such-service", DAY)


def test_service_creation_checks_its_resources(appointments, room):
    with pytest.raises(InvalidRequest) as refused:
        service(appointments, room, resource_ids=[room["resource_id"], room["resource_id"]])
    assert refused.value.code == "duplicate_resources"
    with pytest.raises(InvalidRequest) as refused:
        service(appointments, room, resource_ids=["missing"])
    assert refused.value.code == "unknown_resource"
    morning = appointments.create_resource(ResourceIn.model_validate(
        {"name": "Studio", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "12:00"}}).command())
    with pytest.raises(InvalidRequest) as refused:
        service(appointments, morning, duration_minutes=4 * 60)
    assert refused.value.code == "duration_exceeds_opening_hours"


def test_resource_and_service_with_a_key_are_created_once(appointments):
    body = {"name": "Hall", "timezone": "Asia/Kathmandu", "opening_hours": {"open": "08:45", "close": "12:00"}}
    first = appointments.create_resource(ResourceIn.model_validate(body).command(), "r-1")
    assert appointments.create_resource(ResourceIn.model_validate(body).command(), "r-1") == first
    with pytest.raises(IdempotencyKeyReused):
        appointments.create_resource(ResourceIn.model_validate({**body, "name": "Other"}).command(), "r-1")
    service_body = {"name": "Talk", "mode": "private", "duration_minutes": 45, "resource_ids": [first["resource_id"]],
                    "price": {"value": "10.00", "currency": "RUB"}}
    made = appointments.create_service(ServiceIn.model_validate(service_body).command(), "s-1")
    assert appointments.create_service(ServiceIn.model_validate(service_body).command(), "s-1") == made
    # Kathmandu is UTC+05:45: local quarter hours are still granule boundaries.
    slots = appointments.availability(made["service_id"], DAY)["slots"]
    assert [s["starts_at"] for s in slots] == ["2030-01-02T03:00:00.000Z", "2030-01-02T03:45:00.000Z",
                                               "2030-01-02T04:30:00.000Z", "2030-01-02T05:15:00.000Z"]


def test_day_slots_follow_the_local_wall_clock_across_a_daylight_saving_change():
    hours = OpeningHours.parse("01:00", "04:00")
    berlin = zone("Europe/Berlin")
    # 2030-03-31: 02:00 local does not exist (clocks go from 02:00 to 03:00).
    starts = [slot.starts_at.astimezone(berlin).strftime("%H:%M") for slot in
              day_slots(date(2030, 3, 31), berlin, hours, 60, 60)]
    assert starts == ["01:00", "03:00"]
    # The UTC length of each slot is its duration even when the wall clock jumps, in spring and in
    # autumn (2030-10-27: 02:00-03:00 local happens twice; the first one is offered).
    for day in (date(2030, 3, 31), date(2030, 10, 27)):
        for slot in day_slots(day, berlin, hours, 60, 60):
            assert (slot.ends_at - slot.starts_at).total_seconds() == 3600, (day, slot)
    autumn = [slot.starts_at.strftime("%H:%M") for slot in day_slots(date(2030, 10, 27), berlin, hours, 60, 60)]
    assert autumn == ["23:00", "00:00", "02:00"]   # UTC: 01:00 CEST, 02:00 CEST, 03:00 CET


def test_a_late_payment_retakes_a_free_time_and_never_one_resold(appointments, room, bookings, payments, provider,
                                                                  clock):
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None, payment_mode="one_stage")
    late = book(appointments, hire, room, "alice", "10:00")
    payment_id = payments.start_payment(late.booking_id, "alice", "p").payment.payment_id
    clock.advance(601)
    assert bookings.expire(late.booking_id)["outcome"] == "expired"
    assert free_at(appointments, hire, "10:00") == 1
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed_late"   # RETAKE
    assert free_at(appointments, hire, "10:00") == 0
    # Another hold expires, someone else takes its time, then its payment arrives: not restored.
    second = book(appointments, hire, room, "bob", "12:00")
    second_payment = payments.start_payment(second.booking_id, "bob", "p").payment.payment_id
    clock.advance(601)
    assert bookings.expire(second.booking_id)["outcome"] == "expired"
    book(appointments, hire, room, "carol", "12:00")
    provider.pay(second_payment)
    assert not payments.apply_provider_payment(provider.get_payment(second_payment)).startswith("confirmed")
    assert bookings.view(second.booking_id, "bob")["status"] in ("REFUND_PENDING", "REFUNDED", "MANUAL_REVIEW")
    assert free_at(appointments, hire, "12:00") == 0


def test_a_service_has_no_waitlist_and_no_entry_is_written(appointments, room, store, bookings, clock):
    from holdfast.services.waitlist import WaitlistService

    yoga = service(appointments, room)
    waitlist = WaitlistService(store, bookings, clock)
    with pytest.raises(InvalidRequest) as refused:
        waitlist.join(yoga["service_id"], "alice", 1)
    assert refused.value.code == "waitlist_not_supported"
    # An entry would make every later release of the service's times fail the relay's advance.
    assert store.waitlist_entry(yoga["service_id"], "alice") is None
    assert waitlist.advance(yoga["service_id"]) == []


# ---------------------------------------------------------------- a late payment's alternatives (seed 003)

def utc(at):
    return datetime.fromisoformat(f"{DAY}T{at}:00{MSK}").astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def late_case(appointments, svc, room, bookings, payments, provider, clock, quantity=None, rival_quantity=None):
    """12:00 Alice holds 10:00 and starts paying; 12:10 the hold lapses; 12:11 Bob books 10:00;
    12:12 Alice's authorisation is reported."""
    alice = book(appointments, svc, room, "alice", "10:00", quantity=quantity)
    payment_id = payments.start_payment(alice.booking_id, "alice", "p").payment.payment_id
    clock.advance(601)
    assert bookings.expire(alice.booking_id)["outcome"] == "expired"
    clock.advance(60)
    book(appointments, svc, room, "bob", "10:00", quantity=rival_quantity)
    clock.advance(60)
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "conflict_case_opened"
    return alice, payment_id


@pytest.fixture
def resolutions(store, payments, clock):
    from holdfast.services.resolutions import ResolutionService

    return ResolutionService(store, payments, clock)


def test_a_late_authorisation_is_offered_the_nearest_free_times_and_moves_with_the_same_payment(
        appointments, room, bookings, payments, provider, clock, resolutions):
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None)
    book(appointments, hire, room, "dan", "11:00")            # the nearest time after is taken too
    alice, payment_id = late_case(appointments, hire, room, bookings, payments, provider, clock)
    assert provider.payments[payment_id]["status"] == "waiting_for_capture"
    case = bookings.view(alice.booking_id, "alice")["resolution"]
    assert [(a["starts_at"], a["resource_id"]) for a in case["alternatives"]] == [
        (utc(at), room["resource_id"]) for at in ("09:00", "12:00", "13:00", "14:00", "15:00")]
    assert all(a["available"] == 1 for a in case["alternatives"])
    chosen = {"starts_at": utc("12:00"), "resource_id": room["resource_id"]}
    view = resolutions.choose(alice.booking_id, "alice", "r1", "alternative", chosen)
    assert view["status"] == "CONFIRMED" and view["places"]["starts_at"] == utc("12:00")
    assert view["amount"] == {"value": "700.00", "currency": "RUB"}
    assert provider.payments[payment_id]["status"] == "succeeded"
    assert provider.payments_for(alice.booking_id) == [provider.payments[payment_id]]   # never a second payment
    assert [op for op, _ in provider.calls].count("capture_payment") == 1
    assert free_at(appointments, hire, "12:00") == 0 and free_at(appointments, hire, "10:00") == 0


def test_a_group_case_offers_only_sessions_with_room_for_the_whole_booking(
        appointments, room, bookings, payments, provider, clock, resolutions, store):
    from holdfast import kinds

    yoga = service(appointments, room)
    book(appointments, yoga, room, "dan", "11:00", quantity=2)     # one seat left at 11:00: too few for two
    alice, _ = late_case(appointments, yoga, room, bookings, payments, provider, clock, quantity=2, rival_quantity=2)
    case = bookings.view(alice.booking_id, "alice")["resolution"]
    assert [a["starts_at"] for a in case["alternatives"]][:2] == [utc("09:00"), utc("12:00")]
    assert all(a["available"] == 3 for a in case["alternatives"])
    booking = store.get_booking(alice.booking_id)
    kind, offering = kinds.of_booking(booking), kinds.offering(store.get_event(yoga["service_id"]))
    # A time the service does not offer, or no time at all, is a bad request; a full one is taken.
    for fields, code in (({"starts_at": f"{DAY}T10:15:00{MSK}", "resource_id": room["resource_id"]}, "slot_not_offered"),
                         ({"resource_id": room["resource_id"]}, "invalid_alternative"),
                         ({"starts_at": utc("12:00"), "resource_id": "nope"}, "unknown_resource")):
        with pytest.raises(InvalidRequest) as refused:
            kind.plan_choice(store, offering, booking, fields, now=clock())
        assert refused.value.code == code
    with pytest.raises(SlotUnavailable):
        kind.plan_choice(store, offering, booking, {"starts_at": utc("11:00"), "resource_id": room["resource_id"]},
                         now=clock())
    places = kind.plan_choice(store, offering, booking, {"starts_at": utc("12:00"), "resource_id": room["resource_id"]},
                              now=clock())
    assert places.quantity == 2 and kind.price(offering, places) == booking.amount
    # Someone takes the chosen session meanwhile: the customer is told, and may choose again.
    book(appointments, yoga, room, "erin", "09:00", quantity=2)
    with pytest.raises(Conflict) as gone:
        resolutions.choose(alice.booking_id, "alice", "r1", "alternative",
                           {"starts_at": utc("09:00"), "resource_id": room["resource_id"]})
    assert gone.value.code == "alternative_unavailable"
    assert store.get_booking(alice.booking_id).status.value == "MANUAL_REVIEW"
    view = resolutions.choose(alice.booking_id, "alice", "r2", "alternative",
                              {"starts_at": utc("12:00"), "resource_id": room["resource_id"]})
    assert view["status"] == "CONFIRMED" and view["places"]["starts_at"] == utc("12:00")
    assert free_at(appointments, yoga, "12:00") == 1


def test_a_late_payment_with_the_whole_day_taken_is_given_back_as_before(
        appointments, bookings, payments, provider, clock):
    small = appointments.create_resource(ResourceIn.model_validate(
        {"name": "Booth", "timezone": "Europe/Moscow", "opening_hours": {"open": "09:00", "close": "11:00"}}).command())
    hire = service(appointments, small, name="Booth hire", mode="private", capacity=None)
    book(appointments, hire, small, "dan", "10:00")          # the day's only other time
    alice = book(appointments, hire, small, "alice", "09:00")
    payment_id = payments.start_payment(alice.booking_id, "alice", "p").payment.payment_id
    clock.advance(601)
    bookings.expire(alice.booking_id)
    book(appointments, hire, small, "bob", "09:00")
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "authorisation_cancelled"
    assert "resolution" not in bookings.view(alice.booking_id, "alice")


def test_a_held_booking_says_until_when_it_is_held_and_what_happens_after(appointments, room, bookings, payments,
                                                                          catalog):
    from holdfast.schemas import BookingIn

    from .conftest import event_request

    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None)
    slot = book(appointments, hire, room, "alice", "10:00")
    event = catalog.create_event(event_request())
    seat = bookings.create_booking(event["event_id"], "bob", "b1", BookingIn(quantity=1)).booking
    for booking_id, who in ((slot.booking_id, "alice"), (seat.booking_id, "bob")):   # every kind, the same place
        view = bookings.view(booking_id, who)
        assert view["hold_expires_at"] in view["hold_next_step"] and "released" in view["hold_next_step"]
    payments.start_payment(slot.booking_id, "alice", "p")
    assert bookings.view(slot.booking_id, "alice")["status"] == "PAYMENT_PENDING"
    assert "hold_next_step" in bookings.view(slot.booking_id, "alice")        # still only held while paying
    bookings.cancel(seat.booking_id, "bob")
    assert "hold_next_step" not in bookings.view(seat.booking_id, "bob")


def test_alternatives_and_a_choice_are_judged_by_the_services_clock_not_the_machines(
        appointments, room, bookings, payments, provider, clock, resolutions):
    """The kind has no clock: the service's is passed in. Here the service's clock stands on the
    booked day itself (years after this machine's), so a time of that morning has begun for the
    service although the machine's clock says it is years away."""
    clock.now = datetime.fromisoformat(f"{DAY}T09:30:00{MSK}")
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None)
    alice, _ = late_case(appointments, hire, room, bookings, payments, provider, clock)   # now 09:42
    case = bookings.view(alice.booking_id, "alice")["resolution"]
    starts = [a["starts_at"] for a in case["alternatives"]]
    assert starts == [utc(at) for at in ("11:00", "12:00", "13:00", "14:00", "15:00")]   # 09:00 has begun
    # A new booking refused for a taken time is offered nearby times that have not begun either.
    clock.now = datetime.fromisoformat(f"{DAY}T11:30:00{MSK}")
    book(appointments, hire, room, "frank", "12:00")
    with pytest.raises(SlotUnavailable) as refused:
        book(appointments, hire, room, "erin", "12:00")
    assert min(n["starts_at"] for n in refused.value.details["nearby"]) == utc("13:00")
    # Choosing an offered time that has begun meanwhile is refused like a new booking of it.
    with pytest.raises(InvalidRequest) as begun:
        resolutions.choose(alice.booking_id, "alice", "r1", "alternative",
                           {"starts_at": utc("11:00"), "resource_id": room["resource_id"]})
    assert begun.value.code == "slot_in_past"


def test_a_chosen_time_written_in_another_utc_offset_is_the_offered_time(
        appointments, room, bookings, payments, provider, clock, resolutions):
    """The case lists times in UTC; a customer's page may send the same instant in local time."""
    hire = service(appointments, room, name="Hall hire", mode="private", capacity=None)
    alice, payment_id = late_case(appointments, hire, room, bookings, payments, provider, clock)
    # A time that is not among those offered stays refused, however it is written (10:00 is Bob's).
    with pytest.raises(Conflict) as refused:
        resolutions.choose(alice.booking_id, "alice", "r0", "alternative",
                           {"starts_at": f"{DAY}T07:00:00Z", "resource_id": room["resource_id"]})
    assert refused.value.code == "not_an_offered_alternative"
    local = {"starts_at": f"{DAY}T12:00:00+03:00", "resource_id": room["resource_id"]}
    view = resolutions.choose(alice.booking_id, "alice", "r1", "alternative", local)
    assert view["status"] == "CONFIRMED" and view["places"]["starts_at"] == utc("12:00")
    # The same choice again under the same key, written in UTC this time: answered with the booking.
    again = resolutions.choose(alice.booking_id, "alice", "r1", "alternative",
                               {"starts_at": utc("12:00"), "resource_id": room["resource_id"]})
    assert again["status"] == "CONFIRMED"
    assert [op for op, _ in provider.calls].count("capture_payment") == 1


def test_a_confirmed_slot_is_exchanged_for_another_time_in_one_write(appointments, room, bookings, store, clock):
    """Issue 45: a slot moves to another time of the service (its seat of the session back, the new
    one taken), until ``exchange_until_hours`` before the booked slot's own start."""
    from holdfast.domain.inventory import Move
    from holdfast.domain.statuses import BookingStatus
    from holdfast.services import transitions
    from holdfast.services.exchange import ExchangeService

    svc = service(appointments, room, exchange_until_hours=2)
    held = book(appointments, svc, room, "ann", "10:00")
    transitions.apply(store, held, clock(), status=BookingStatus.CONFIRMED, actor="test", action="paid",
                      decision="paid", move=Move.SELL)
    later = HoldPlaces.of(SlotBookingIn.model_validate({"starts_at": f"{DAY}T12:00:00{MSK}",
                                                        "resource_id": room["resource_id"]}))
    moved = ExchangeService(store, clock).exchange(held.booking_id, "ann", "x-1", None, later)
    assert moved.status is BookingStatus.CONFIRMED and moved.places.granules[0].at == f"{DAY}T09:00"
    assert free_at(appointments, svc, "10:00") == 3 and free_at(appointments, svc, "12:00") == 2
    clock.now = datetime(2030, 1, 2, 7, 1, tzinfo=timezone.utc)   # 1 h 59 min before the 12:00 (MSK) slot
    with pytest.raises(Conflict) as late:
        ExchangeService(store, clock).exchange(held.booking_id, "ann", "x-2", None, HoldPlaces.of(
            SlotBookingIn.model_validate({"starts_at": f"{DAY}T15:00:00{MSK}", "resource_id": room["resource_id"]})))
    assert late.value.code == "exchange_closed"
