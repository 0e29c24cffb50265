"""Parking on the table's fake store (tests/support/fake_table.py, held to the adapter on moto and
DynamoDB Local by tests/contract/storage/): lots with typed spaces, allocation with fallback over
time windows, the tariff, reservations through the one hold path and payment, entry tokens, gate
passes (token, drive-up, subscriptions) with repeats, exits with and without money owed, and the
NO_SHOW timer."""
from __future__ import annotations

from datetime import datetime, timedelta
from holdfast.clock import iso

import pytest

from holdfast.domain.errors import Conflict, InvalidRequest
from holdfast.products.parking import rules
from holdfast.products.parking.schemas import LotIn, ReservationIn, SubscriptionIn
from holdfast.domain.signatures import unb64
from holdfast.products.parking.tokens import LotKeys, verify
from holdfast.services.bookings import BookingService
from holdfast.products.parking.services.gate_passes import GatePasses
from holdfast.products.parking.services.lots import ParkingService
from holdfast.services.sweeper import sweep
from tests.support.fake_table import FakeTableStore

KEYS = LotKeys(b"unit-test-parking-master-seed")
SPACES = [{"space_id": "C1", "type": "COMPACT", "priority": 1}, {"space_id": "R1", "type": "REGULAR", "priority": 1},
          {"space_id": "R2", "type": "REGULAR", "priority": 0}, {"space_id": "L1", "type": "LARGE"},
          {"space_id": "H1", "type": "HANDICAP"}]
DAY = "2030-01-02"


@pytest.fixture
def store():
    return FakeTableStore()


@pytest.fixture
def view_bookings(store, clock, scheduled):
    from holdfast import kinds

    return BookingService(store, clock, lambda booking_id, at: scheduled.append((booking_id, at)),
                          view_extras=lambda b: kinds.of_booking(b).view_extras(b, lambda: KEYS))


@pytest.fixture
def parking(store, clock, view_bookings):
    return ParkingService(store, clock, view_bookings, 600, lambda: KEYS, id_salt="tests-deployment-salt")


@pytest.fixture
def gates(store, clock, parking, provider):
    return GatePasses(store, clock, parking, lambda: provider, "http://127.0.0.1:3000/booking.html?id={booking_id}",
                      exit_page_url="http://127.0.0.1:3000/exit.html")


def make_lot(parking, spaces=SPACES, **overrides):
    body = {"name": "Central", "spaces": spaces, "tariff": {"hourly": {"value": "100.00", "currency": "RUB"},
                                                           "daily_cap": {"value": "1000.00", "currency": "RUB"},
                                                           "grace_minutes": 10},
            "no_show_grace_seconds": 900} | overrides
    return parking.create_lot(LotIn.model_validate(body).command())


def reserve(parking, lot, vehicle="REGULAR", start="10:00", end="12:00", permit=False, customer="alice", key=None,
            plate="A123BC77"):
    body = {"vehicle_type": vehicle, "plate": plate, "from": f"{DAY}T{start}:00Z", "to": f"{DAY}T{end}:00Z",
            "handicap_permit": permit}
    return parking.reserve(lot["lot_id"], customer, key or f"{customer}-{vehicle}-{start}-{permit}-{plate}",
                           ReservationIn.model_validate(body).command()).booking


def confirm(payments, provider, booking):
    payment_id = payments.start_payment(booking.booking_id, booking.customer_id, "pay-" + booking.booking_id).payment.payment_id
    provider.pay(payment_id)
    assert payments.apply_provider_payment(provider.get_payment(payment_id)) == "confirmed"


def test_allocation_falls_back_by_type_and_keeps_handicap_for_permits(parking):
    lot = make_lot(parking)
    taken = [reserve(parking, lot, "COMPACT", plate=f"P{n}", customer=f"c{n}").kind_details["space_id"] for n in range(4)]
    # compact: COMPACT, then REGULAR by priority (R2 before R1), then LARGE; never HANDICAP without a permit
    assert taken == ["C1", "R2", "R1", "L1"]
    with pytest.raises(Conflict) as refused:
        reserve(parking, lot, "COMPACT", plate="X1", customer="x1")
    assert refused.value.code == "no_space_available"
    assert reserve(parking, lot, "LARGE", permit=True, plate="X2", customer="x2").kind_details["space_id"] == "H1"


def test_every_vehicle_type_and_permit_gets_its_first_choice_on_an_empty_lot(parking):
    lot = make_lot(parking)
    expected = {("COMPACT", False): "C1", ("REGULAR", False): "R2", ("LARGE", False): "L1",
                ("COMPACT", True): "H1", ("REGULAR", True): "H1", ("LARGE", True): "H1"}
    for index, ((vehicle, permit), space) in enumerate(expected.items()):
        start = f"{index:02d}:00"
        end = f"{index:02d}:30"
        booking = reserve(parking, lot, vehicle, start, end, permit=permit, customer=f"c{index}")
        assert booking.kind_details["space_id"] == space, (vehicle, permit)


def test_touching_windows_share_a_space_and_overlapping_ones_do_not(parking):
    lot = make_lot(parking, spaces=[{"space_id": "L1", "type": "LARGE"}])
    reserve(parking, lot, "LARGE", "10:00", "12:00", plate="A1")
    assert reserve(parking, lot, "LARGE", "12:00", "13:00", plate="A2").kind_details["space_id"] == "L1"
    assert reserve(parking, lot, "LARGE", "08:00", "10:00", plate="A3").kind_details["space_id"] == "L1"
    with pytest.raises(Conflict):
        reserve(parking, lot, "LARGE", "11:30", "12:30", plate="A4")


def test_the_price_is_the_hourly_tariff_capped_per_day(parking):
    lot = make_lot(parking)
    assert reserve(parking, lot, "REGULAR", "10:00", "11:30").amount.text == "200.00"   # two started hours
    day = reserve(parking, lot, "LARGE", "00:00", "23:30")
    assert day.amount.text == "1000.00"   # 24 hours would be 2400: the daily cap


def test_a_lot_shows_each_tariff_amount_as_value_and_currency(parking, store):
    lot = make_lot(parking)
    tariff = {"hourly": {"value": "100.00", "currency": "RUB"}, "daily_cap": {"value": "1000.00", "currency": "RUB"},
              "grace_minutes": 10}
    assert lot["tariff"] == parking.get_lot(lot["lot_id"])["tariff"] == tariff
    # stored as before (text in the lot's currency), so lots created with a bare daily_cap read the same
    stored = store.get_event(lot["lot_id"])
    assert (stored["settings"]["daily_cap"], stored["currency"]) == ("1000.00", "RUB")
    uncapped = make_lot(parking, tariff={"hourly": {"value": "100.00", "currency": "RUB"}})
    assert uncapped["tariff"]["daily_cap"] is None


def test_a_window_covers_every_granule_it_touches():
    at = lambda hhmm: datetime.fromisoformat(f"{DAY}T{hhmm}:00+00:00")   # noqa: E731
    assert rules.window_granules(at("10:10"), at("11:40")) == [f"{DAY}T{t}" for t in ("10:00", "10:30", "11:00", "11:30")]
    assert rules.window_granules(at("10:00"), at("11:00")) == [f"{DAY}T10:00", f"{DAY}T10:30"]
    assert rules.window_minutes(at("10:10"), at("11:40")) == 90


def test_a_window_to_the_minute_claims_the_granules_it_touches_and_is_billed_for_its_own_minutes(parking, store):
    lot = make_lot(parking, spaces=[{"space_id": "L1", "type": "LARGE"}])
    booking = reserve(parking, lot, "LARGE", "10:10", "11:10", plate="A1")
    # 60 minutes: one started hour, though its granules (10:00-11:30) last 90 minutes
    assert booking.amount.text == "100.00"
    assert (booking.kind_details["from"], booking.kind_details["to"]) == (f"{DAY}T10:10:00.000Z", f"{DAY}T11:10:00.000Z")
    assert [g.at[11:] for g in booking.places.granules] == ["10:00", "10:30", "11:00"]
    # the granule 11:00-11:30 is partly used, so it is taken: a window from 11:20 finds no space
    with pytest.raises(Conflict) as taken:
        reserve(parking, lot, "LARGE", "11:20", "12:00", plate="A2")
    assert taken.value.code == "no_space_available"
    assert parking.get_lot(lot["lot_id"])["counts"]["LARGE"]["available"] == 1   # nothing of it runs now
    assert reserve(parking, lot, "LARGE", "11:30", "12:05", plate="A3").amount.text == "100.00"   # 35 minutes
    assert reserve(parking, lot, "LARGE", "09:05", "10:00", plate="A4").kind_details["space_id"] == "L1"


def test_windows_with_seconds_or_too_long_are_refused(parking):
    lot = make_lot(parking)
    with pytest.raises(InvalidRequest) as off:
        parking.reserve(lot["lot_id"], "a", "s", ReservationIn.model_validate(
            {"vehicle_type": "REGULAR", "plate": "A1", "from": f"{DAY}T10:10:30Z", "to": f"{DAY}T11:00:00Z"}).command())
    assert off.value.code == "window_not_on_minute"
    # 24 hours off the half hour touch 49 granules: still one transaction with the booking's own items
    day = parking.reserve(lot["lot_id"], "d", "d", ReservationIn.model_validate(
        {"vehicle_type": "LARGE", "plate": "D1", "from": f"{DAY}T10:10:00Z", "to": "2030-01-03T10:10:00Z"}).command())
    assert len(day.booking.places.granules) == 49 and day.booking.amount.text == "1000.00"   # the daily cap
    with pytest.raises(InvalidRequest) as long:
        parking.reserve(lot["lot_id"], "e", "e", ReservationIn.model_validate(
            {"vehicle_type": "LARGE", "plate": "E1", "from": f"{DAY}T10:10:00Z", "to": "2030-01-03T10:11:00Z"}).command())
    assert long.value.code == "window_too_long"
    with pytest.raises(InvalidRequest) as past:
        parking.reserve(lot["lot_id"], "a", "k", ReservationIn.model_validate(
            {"vehicle_type": "REGULAR", "plate": "A1", "from": "2029-12-31T10:00:00Z", "to": "2029-12-31T11:00:00Z"}).command())
    assert past.value.code == "window_in_past"


def test_a_confirmed_reservation_carries_a_token_the_lot_key_verifies(parking, view_bookings, payments, provider):
    lot = make_lot(parking)
    booking = reserve(parking, lot)
    assert "entry_token" not in view_bookings.view(booking.booking_id, "alice")
    confirm(payments, provider, booking)
    view = view_bookings.view(booking.booking_id, "alice")
    payload = verify(view["entry_token"], unb64(lot["public_key"]["public_key"]), lot["lot_id"])
    assert payload["bk"] == booking.booking_id and payload["space"] == "R2" and payload["plate"] == "A123BC77"
    assert payload["kid"] == lot["public_key"]["kid"]


def test_entry_by_token_then_exit_inside_the_window_each_repeat_answered_alike(parking, gates, payments, provider,
                                                                                 clock, store):
    lot = make_lot(parking)
    booking = reserve(parking, lot)
    confirm(payments, provider, booking)
    token = parking.bookings.view(booking.booking_id, "alice")["entry_token"]
    gate = parking.create_gate(lot["lot_id"], "North")
    clock.now = clock.now.replace(day=2, hour=9, minute=50)
    entry = {"kind": "entry", "event_id": "e-1", "token": token}
    opened = gates.apply(lot["lot_id"], gate["gate_id"], entry, at=clock(), offline=False)
    assert opened["gate_open"] is True and opened["space_id"] == "R2"
    assert gates.apply(lot["lot_id"], gate["gate_id"], entry, at=clock(), offline=False) == opened
    again = gates.apply(lot["lot_id"], gate["gate_id"], {**entry, "event_id": "e-2"}, at=clock(), offline=False)
    assert again["gate_open"] is False and again["reason"] == "already_inside"
    assert parking.get_lot(lot["lot_id"])["occupied"] == 1
    clock.now = clock.now.replace(hour=12, minute=5)   # 2h15m inside, 10 grace minutes: 2h05m -> 3 hours
    exit_ = {"kind": "exit", "event_id": "x-1", "ticket_id": opened["ticket_id"]}
    owed = gates.apply(lot["lot_id"], gate["gate_id"], exit_, at=clock(), offline=False)
    assert owed["exit_granted"] is False and owed["amount_due"] == {"value": "100.00", "currency": "RUB"}
    assert gates.apply(lot["lot_id"], gate["gate_id"], exit_, at=clock(), offline=False) == owed
    [payment] = [p for p in provider.payments.values() if p["metadata"].get("ticket_id") == opened["ticket_id"]]
    assert payment["amount"]["value"] == "100.00"
    provider.pay(payment["id"])
    granted = gates.apply(lot["lot_id"], gate["gate_id"], {**exit_, "event_id": "x-2"}, at=clock(), offline=False)
    assert granted["exit_granted"] is True
    assert store.get_booking(booking.booking_id).status == "COMPLETED"
    twice = gates.apply(lot["lot_id"], gate["gate_id"], {**exit_, "event_id": "x-3"}, at=clock(), offline=False)
    assert twice == {**granted, "exit_granted": False, "reason": "ticket_closed"}   # the ticket served its car
    assert parking.get_lot(lot["lot_id"])["occupied"] == 0


def test_an_orders_parking_line_whose_car_left_gives_its_space_back_with_the_exit(parking, gates, payments, provider,
                                                                                    clock, store):
    """Issue 43: an order's parking line enters through the gate (CHECKED_IN) and leaves
    (COMPLETED) while the order stays CONFIRMED; the exit's write frees the line's space and takes
    it out of the order's places (invariant O5), so the rest of the window is another driver's."""
    from holdfast import kinds
    from holdfast.products.orders.services import OrderLine, OrderService, PlaceOrder

    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    body = {"vehicle_type": "REGULAR", "plate": "A123BC77", "from": f"{DAY}T10:00:00Z", "to": f"{DAY}T12:00:00Z"}
    order = OrderService(parking.bookings).place("alice", "order-1", PlaceOrder((
        OrderLine(lot["lot_id"], ReservationIn.model_validate(body).command()),))).booking
    confirm(payments, provider, order)
    paid = store.get_booking(order.booking_id)
    line = kinds.of_booking(paid).part(paid, lot["lot_id"])   # the line's pass, as the order's view signs it
    token = kinds.named("parking").pass_token(line, lambda: KEYS)
    gate = parking.create_gate(lot["lot_id"], "North")
    clock.now = clock.now.replace(day=2, hour=9, minute=50)
    opened = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "e-1", "token": token},
                         at=clock(), offline=False)
    assert opened["gate_open"] is True
    clock.now = clock.now.replace(hour=11, minute=0)
    left = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "x-1",
                                                        "ticket_id": opened["ticket_id"]}, at=clock(), offline=False)
    assert left["exit_granted"] is True
    after = store.get_booking(order.booking_id)
    assert after.status.value == "CONFIRMED" and after.kind_details["lines"][0]["status"] == "COMPLETED"
    assert after.places.granules == ()
    rival = reserve(parking, lot, start="11:00", end="12:00", customer="bob", plate="B777BB77")
    assert rival.status.value == "HELD"


def test_a_drive_up_gets_a_space_and_pays_at_exit_and_a_subscriber_pays_nothing(parking, gates, clock, provider,
                                                                                  store):
    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}, {"space_id": "L1", "type": "LARGE"}])
    gate = parking.create_gate(lot["lot_id"], "South")
    parking.create_subscription(lot["lot_id"], SubscriptionIn.model_validate(
        {"plate": "sub 1", "valid_from": "2029-01-01T00:00:00Z", "valid_to": "2031-01-01T00:00:00Z"}).command())
    lot_id, gate_id = lot["lot_id"], gate["gate_id"]
    first = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "d-1", "plate": "X 1"}, at=clock(), offline=False)
    sub = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "d-2", "plate": "SUB1"}, at=clock(), offline=False)
    full = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "d-3", "plate": "X3"}, at=clock(), offline=False)
    assert (first["space_id"], sub["space_id"]) == ("R1", "L1")
    assert full == {"gate_open": False, "ticket_id": None, "space_id": None, "reason": "lot_full"}
    clock.now += timedelta(minutes=65)
    assert gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "s-x", "plate": "sub1"}, at=clock(),
                       offline=False)["exit_granted"] is True
    owed = gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "d-x", "plate": "X1"}, at=clock(), offline=False)
    assert owed["amount_due"]["value"] == "100.00"   # 65 minutes less 10 of grace: one started hour
    provider.pay(next(p["id"] for p in provider.payments.values() if p["metadata"]["ticket_id"] == first["ticket_id"]))
    assert gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "d-x2", "plate": "X1"}, at=clock(),
                       offline=False)["exit_granted"] is True
    assert parking.get_lot(lot_id)["counts"]["REGULAR"]["available"] == 1
    # the bus hears of the drive-up's exit with its charge as an amount, like every amount it hears
    [exited] = store.table.query(f"TICKET#{first['ticket_id']}", prefix="OUTBOX#")
    assert (exited["type"], exited["charge"]) == ("vehicle.exited", {"value": "100.00", "currency": "RUB"})


def test_a_reservation_not_entered_by_its_grace_becomes_no_show_and_frees_the_space(parking, payments, provider,
                                                                                       clock, store):
    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    booking = reserve(parking, lot, "REGULAR", "10:00", "14:00")
    confirm(payments, provider, booking)
    clock.now = clock.now.replace(day=2, hour=10, minute=20)   # grace 15 minutes + the sweeper's 60 s
    counts = sweep(store, clock, expire=lambda _: {}, start_reconciliation=lambda *_: None, give_up=lambda *_: None)
    assert store.get_booking(booking.booking_id).status == "NO_SHOW"
    assert counts["timers"] == 1
    assert reserve(parking, lot, "REGULAR", "11:00", "12:00", customer="bob").kind_details["space_id"] == "R1"


def test_an_entry_and_an_exit_with_the_same_event_id_are_two_passes(parking, gates, clock):
    # found by the API fuzzer: the exit was answered with the entry's stored answer
    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    gate = parking.create_gate(lot["lot_id"], "West")
    entered = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "0", "plate": "Q1"},
                          at=clock(), offline=False)
    left = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "0", "plate": "Q1"},
                       at=clock(), offline=False)
    assert entered["gate_open"] is True and left["exit_granted"] is True


def test_an_exit_payment_whose_answer_was_lost_is_asked_again_under_the_same_key(parking, gates, clock, provider):
    from holdfast.domain.errors import PaymentProviderUnavailable

    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    gate = parking.create_gate(lot["lot_id"], "East")
    entered = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "entry", "event_id": "i", "plate": "Z1"},
                          at=clock(), offline=False)
    clock.now += timedelta(minutes=90)
    provider.fail("create_payment", "after")   # the provider made the payment; its answer was lost
    with pytest.raises(PaymentProviderUnavailable):   # 503: try the exit again
        gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "o1", "plate": "Z1"},
                    at=clock(), offline=False)
    owed = gates.apply(lot["lot_id"], gate["gate_id"], {"kind": "exit", "event_id": "o2", "plate": "Z1"},
                       at=clock(), offline=False)
    assert owed["amount_due"]["value"] == "200.00" and owed["confirmation_url"]
    assert len([p for p in provider.payments.values() if p["metadata"]["ticket_id"] == entered["ticket_id"]]) == 1


def test_an_offline_entry_applied_late_onto_a_taken_lot_moves_or_opens_a_review(parking, gates, payments, provider,
                                                                               clock, store):
    # the gate let two cars in at 10:00 while offline; by the sync at 11:00 the window they were
    # recorded for is taken (R1 by a reservation until 11:00, L1 until 14:00)
    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}, {"space_id": "L1", "type": "LARGE"}])
    gate = parking.create_gate(lot["lot_id"], "North")
    confirm(payments, provider, reserve(parking, lot, "REGULAR", "10:00", "11:00", customer="bob", plate="B1"))
    confirm(payments, provider, reserve(parking, lot, "LARGE", "10:00", "14:00", customer="carol", plate="C1"))
    clock.now = clock.now.replace(day=2, hour=11, minute=0)
    lot_id, gate_id, at = lot["lot_id"], gate["gate_id"], clock.now.replace(hour=10)
    first = {"kind": "entry", "event_id": "off-1", "plate": "OFF1", "local_ticket_id": "L-1"}
    moved = gates.apply(lot_id, gate_id, first, at=at, offline=True)
    assert (moved["gate_open"], moved["space_id"]) == (True, "R1")   # free from now on, a fitting type
    assert moved["conflict"] == {"type": "space_taken", "resolution": "moved", "space_id": "R1", "needs_review": False}
    assert store.get_ticket(moved["ticket_id"])["entered_at"] == "2030-01-02T10:00:00.000Z"   # charged from entry

    second = {"kind": "entry", "event_id": "off-2", "plate": "OFF2", "local_ticket_id": "L-2"}
    review = gates.apply(lot_id, gate_id, second, at=at, offline=True)
    assert (review["gate_open"], review["reason"]) == (False, "lot_full")
    assert review["conflict"]["resolution"] == "review" and review["conflict"]["needs_review"] is True
    assert gates.apply(lot_id, gate_id, second, at=at, offline=True) == review      # a repeat opens nothing more
    cases = store.list_gate_cases(None, 100, None)[0]
    assert [(c["case_id"], c["lot_id"], c["gate_id"], c["event_id"], c["plate"], c["reason"]) for c in cases] == \
        [(review["conflict"]["case_id"], lot_id, gate_id, "off-2", "OFF2", "lot_full")]
    # the same refusal on a gate that is online opened nothing: the gate stayed shut
    online = gates.apply(lot_id, gate_id, {**second, "event_id": "on-3"}, at=clock(), offline=False)
    assert online["reason"] == "lot_full" and "conflict" not in online
    assert len(store.list_gate_cases(None, 100, None)[0]) == 1


def _refunds(provider, store, booking):
    payment_id = store.get_booking(booking.booking_id).payment.payment_id
    return [(r["amount"]["value"], r["status"]) for r in provider.refunds_for(payment_id)]


def test_the_lot_policy_decides_the_refund_of_a_no_show_and_of_a_cancellation(parking, view_bookings, payments,
                                                                              provider, clock, store):
    def no_show_sweep():
        return sweep(store, clock, expire=lambda _: {}, start_reconciliation=lambda *_: None, give_up=lambda *_: None,
                     refund_timer=payments.refund_after_timer)

    def cancel(booking):
        return view_bookings.cancel(booking.booking_id, booking.customer_id, refund=payments.cancel_confirmed)

    spaces = [{"space_id": "R1", "type": "REGULAR"}, {"space_id": "R2", "type": "REGULAR"}]
    kept = make_lot(parking, spaces=spaces)                        # the defaults: no-show keeps, cancel refunds
    assert kept["policy"] == {"refund_no_show": False, "cancel_refund": "full", "cancel_refund_until_minutes_before": 0}
    generous = make_lot(parking, spaces=spaces, policy={"refund_no_show": True, "cancel_refund_until_minutes_before": 120})
    strict = make_lot(parking, spaces=spaces, policy={"cancel_refund": "none"})
    bookings = {}
    plan = (("kept", kept, "ann", "10:00", "11:30"), ("kept", kept, "ben", "09:00", "10:00"),
            ("generous", generous, "ann", "10:00", "11:30"), ("generous", generous, "ben", "09:00", "10:00"),
            ("strict", strict, "ann", "10:00", "11:30"))
    for name, lot, who, start, end in plan:
        bookings[name, who] = reserve(parking, lot, "REGULAR", start, end, customer=who, key=f"{name}-{who}")
        confirm(payments, provider, bookings[name, who])

    clock.now = clock.now.replace(day=2, hour=8, minute=30)          # 90 minutes before 10:00
    assert cancel(bookings["kept", "ann"]).status == "REFUNDED" and _refunds(provider, store, bookings["kept", "ann"]) == \
        [("200.00", "succeeded")]
    late = cancel(bookings["generous", "ann"])                      # inside the 120 minutes: nothing back
    assert late.status == "CANCELLED_NO_REFUND" and _refunds(provider, store, late) == []
    assert cancel(bookings["generous", "ann"]).status == "CANCELLED_NO_REFUND"      # a repeat changes nothing
    assert cancel(bookings["strict", "ann"]).status == "CANCELLED_NO_REFUND"
    assert _refunds(provider, store, bookings["strict", "ann"]) == []

    clock.now = clock.now.replace(hour=9, minute=20)                 # ben never came by 09:15
    swept = no_show_sweep()
    assert swept["timers"] == 2, swept
    assert store.get_booking(bookings["kept", "ben"].booking_id).status == "NO_SHOW"
    assert _refunds(provider, store, bookings["kept", "ben"]) == []
    refunded = store.get_booking(bookings["generous", "ben"].booking_id)
    assert refunded.status == "REFUNDED" and _refunds(provider, store, refunded) == [("100.00", "succeeded")]
    assert [e.action for e in store.get_booking_with_journal(refunded.booking_id)[1]][-2:] == \
        ["no_show_refund", "refund_succeeded"]
    assert no_show_sweep().get("timers", 0) == 0 and len(_refunds(provider, store, refunded)) == 1   # once


def test_a_free_reservation_on_a_lot_that_refunds_no_shows_becomes_no_show_with_nothing_to_give_back(
        payments, clock, store, scheduled):
    """A reservation given free by a 100 % code has no payment: at its no-show a lot that refunds
    no-shows has nothing to give back, so it enters NO_SHOW as on any lot (the refund path asserted
    a payment, so every sweep failed on it again and it stayed at the head of the due index)."""
    from holdfast.services.codes import CodeService

    coded = BookingService(store, clock, lambda booking_id, at: scheduled.append((booking_id, at)),
                           codes=CodeService(store, clock))
    parking = ParkingService(store, clock, coded, 600, lambda: KEYS, id_salt="tests-deployment-salt")
    lot = make_lot(parking, policy={"refund_no_show": True})
    CodeService(store, clock).create(lot["lot_id"], {"code": "FREEPARK", "kind": "percent", "value": 100}, None)
    body = {"vehicle_type": "REGULAR", "plate": "F100EE77", "from": f"{DAY}T10:00:00Z", "to": f"{DAY}T11:00:00Z",
            "code": "FREEPARK"}
    free = parking.reserve(lot["lot_id"], "zed", "free-1", ReservationIn.model_validate(body).command()).booking
    assert free.comp and free.status == "CONFIRMED"
    clock.now = clock.now.replace(day=2, hour=10, minute=20)   # grace 15 minutes + the sweeper's 60 s
    swept = sweep(store, clock, expire=lambda _: {}, start_reconciliation=lambda *_: None, give_up=lambda *_: None,
                  refund_timer=payments.refund_after_timer)
    assert swept.get("timers") == 1 and swept["failed"] == 0, swept
    assert store.get_booking(free.booking_id).status == "NO_SHOW"


def test_a_gates_configuration_lists_the_coming_confirmed_reservations_and_an_offline_plate_entry_checks_one_in(
        parking, gates, payments, provider, clock, store):
    from holdfast.products.parking.gate_sync_schemas import SyncPassIn
    from holdfast.products.parking.services.gate_sync import GateSync
    from tests.support.fakes import FakeGateSyncLedger

    lot = make_lot(parking, spaces=[{"space_id": f"R{n}", "type": "REGULAR"} for n in range(1, 4)])
    gate = parking.create_gate(lot["lot_id"], "North")
    lot_id, gate_id, key = lot["lot_id"], gate["gate_id"], gate["gate_key"]
    coming = reserve(parking, lot, "REGULAR", "10:00", "12:00", customer="bob", plate="b 1")
    confirm(payments, provider, coming)
    confirm(payments, provider, reserve(parking, lot, "REGULAR", "12:00", "13:00", customer="carol", plate="C1"))
    reserve(parking, lot, "REGULAR", "09:30", "10:30", customer="dave", plate="D1")          # held, not paid
    clock.now = clock.now.replace(day=2, hour=9, minute=0)
    gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "drive", "plate": "E1"}, at=clock(), offline=False)

    config = parking.gate_config(lot_id, gate_id, key)
    # 09:00 + 2 hours ahead + 15 minutes' early entry: bob's 10:00 is listed, carol's 12:00 not yet;
    # nothing about the customer goes to the gate
    assert config["reservations"] == [{"booking_id": coming.booking_id, "plate": "B1", "space_id": "R1",
                                       "from": f"{DAY}T10:00:00.000Z", "to": f"{DAY}T12:00:00.000Z"}]
    assert config["reservations_valid_until"] == f"{DAY}T11:00:00.000Z"

    sync = GateSync(FakeGateSyncLedger(store.table), gates.apply)
    at = clock.now.replace(minute=50)                               # inside the early entry
    clock.now = at.replace(hour=10, minute=5)                       # the gate syncs after it came back
    admitted = SyncPassIn(seq=1, event_id="in", kind="entry", at=at, plate="B1",
                          booking_id=coming.booking_id).as_event()
    forged = SyncPassIn(seq=2, event_id="in-2", kind="entry", at=at, plate="Z9",
                        booking_id=coming.booking_id).as_event()
    first, second = sync.sync(lot_id, gate_id, [admitted, forged])["results"]
    assert (first["status"], first["result"]["gate_open"], first["result"]["space_id"]) == ("applied", True, "R1")
    assert store.get_booking(coming.booking_id).status == "CHECKED_IN"
    assert store.get_ticket(first["result"]["ticket_id"])["booking_id"] == coming.booking_id
    assert (second["result"]["reason"], second["conflict"]["reason"]) == ("reservation_not_found",
                                                                          "reservation_not_found")
    later = parking.gate_config(lot_id, gate_id, key)["reservations"]
    assert [r["plate"] for r in later] == ["C1"]            # bob is inside: no longer listed; carol's is coming


def test_an_online_entry_by_plate_checks_in_the_holders_reservation(parking, gates, payments, provider, clock, store):
    lot = make_lot(parking, spaces=[{"space_id": f"R{n}", "type": "REGULAR"} for n in range(1, 3)])
    gate = parking.create_gate(lot["lot_id"], "North")
    lot_id, gate_id = lot["lot_id"], gate["gate_id"]
    booking = reserve(parking, lot, "REGULAR", "10:00", "12:00", customer="bob", plate="b 1")
    confirm(payments, provider, booking)

    def entry(event_id, plate):
        return gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": event_id, "plate": plate}, at=clock(),
                           offline=False)

    clock.now = clock.now.replace(day=2, hour=9, minute=30)         # before the early entry: a drive-up
    early = entry("too-early", "B1")
    assert early["gate_open"] is True and store.get_ticket(early["ticket_id"]).get("booking_id") is None
    assert gates.apply(lot_id, gate_id, {"kind": "exit", "event_id": "out", "plate": "B1"}, at=clock(),
                       offline=False)["exit_granted"] is True      # inside the grace minutes
    clock.now = clock.now.replace(minute=50)                        # inside the early entry
    came = entry("in", "B 1")
    assert (came["gate_open"], came["space_id"]) == (True, "R1")
    ticket = store.get_ticket(came["ticket_id"])
    assert (ticket["booking_id"], ticket["prepaid"]) == (booking.booking_id, booking.amount.text)
    assert store.get_booking(booking.booking_id).status == "CHECKED_IN"


def test_a_holder_whose_space_a_car_overstays_on_is_put_on_a_free_space(parking, gates, payments, provider, clock,
                                                                        store):
    lot = make_lot(parking, spaces=[{"space_id": f"R{n}", "type": "REGULAR"} for n in range(1, 3)])
    gate_id = parking.create_gate(lot["lot_id"], "North")["gate_id"]
    lot_id = lot["lot_id"]
    first = reserve(parking, lot, "REGULAR", "10:00", "11:00", customer="ann", plate="A1")
    second = reserve(parking, lot, "REGULAR", "11:00", "12:00", customer="ben", plate="B1")
    confirm(payments, provider, first)
    confirm(payments, provider, second)
    assert first.kind_details["space_id"] == second.kind_details["space_id"] == "R1"   # touching windows

    def pass_(kind, event_id, plate):
        return gates.apply(lot_id, gate_id, {"kind": kind, "event_id": event_id, "plate": plate}, at=clock(),
                           offline=False)

    clock.now = clock.now.replace(day=2, hour=10, minute=0)
    assert pass_("entry", "a-in", "A1")["space_id"] == "R1"
    clock.now = clock.now.replace(hour=11, minute=5)                # ann is still there
    came = pass_("entry", "b-in", "B1")
    assert (came["gate_open"], came["space_id"]) == (True, "R2")
    spaces = [t["space_id"] for t in store.open_tickets(lot_id)]
    assert sorted(spaces) == ["R1", "R2"]
    clock.now = clock.now.replace(minute=50)
    assert pass_("exit", "b-out", "B1")["exit_granted"] is True    # inside its window: prepaid
    assert pass_("entry", "c-in", "C1")["space_id"] == "R2"         # R2 is free again


def test_a_cancelled_lot_lets_no_drive_up_in_online_and_records_one_a_gate_let_in_offline(parking, gates, clock, store):
    from holdfast.services.event_cancellation import EventCancellationService

    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}, {"space_id": "R2", "type": "REGULAR"}])
    gate = parking.create_gate(lot["lot_id"], "South")
    lot_id, gate_id = lot["lot_id"], gate["gate_id"]
    EventCancellationService(store, clock, None).cancel(lot_id, "close-the-lot", "flooded")
    refused = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "c-1", "plate": "X 1"}, at=clock(),
                          offline=False)
    assert refused == {"gate_open": False, "ticket_id": None, "space_id": None, "reason": "lot_closed"}
    assert parking.get_lot(lot_id)["counts"]["REGULAR"]["available"] == 2
    # a car a gate let in while offline is inside: it gets its ticket, so that it can leave and pay
    inside = gates.apply(lot_id, gate_id, {"kind": "entry", "event_id": "c-2", "plate": "X 2"}, at=clock(),
                         offline=True)
    assert inside["gate_open"] is True and inside["ticket_id"]


def test_a_lots_key_is_derived_once_per_container_not_on_every_public_read(monkeypatch):
    """GET /lots/{id} is public and answers with the lot's key: repeated reads must not each pay
    the HKDF and Ed25519 derivation (issue 34, finding 2)."""
    from cryptography.hazmat.primitives.kdf import hkdf

    derived = []
    real = hkdf.HKDF

    def counting(*args, **kwargs):
        derived.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(hkdf, "HKDF", counting)
    keys = LotKeys(b"a-seed-no-other-test-uses-0123456789")
    first = keys.public_key("lot-cached")
    assert [keys.public_key("lot-cached") for _ in range(50)] == [first] * 50
    assert LotKeys(b"a-seed-no-other-test-uses-0123456789").public_key("lot-cached") == first
    assert len(derived) == 1
    # issue 42, finding 12: a product has one signing key (per-lot keys needed the private root to
    # derive a lot's public half, which the gates' function must not hold): every lot shows the same
    # key, and only another root (events', another seed) derives another
    from holdfast.products.events.tickets import EventKeys

    assert keys.public_key("lot-other") == first and len(derived) == 1
    assert EventKeys(b"a-seed-no-other-test-uses-0123456789").public_key("ev-1") != first and len(derived) == 2


def test_a_minute_window_is_what_the_pass_the_no_show_timer_and_a_late_payment_go_by(parking, gates, payments,
                                                                                      provider, clock, store):
    from holdfast import kinds

    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}])
    booking = reserve(parking, lot, "REGULAR", "10:10", "11:40")
    assert booking.amount.text == "200.00"   # 90 minutes: two started hours
    assert booking.kind_details["timer_from"] == f"{DAY}T10:10:00.000Z"   # the window's start, not the granule's 10:00
    parking_kind = kinds.named("parking")
    assert not parking_kind.ended(booking, datetime.fromisoformat(f"{DAY}T11:39:00+00:00"))
    assert parking_kind.ended(booking, datetime.fromisoformat(f"{DAY}T11:40:00+00:00"))   # its granule runs to 12:00
    confirm(payments, provider, booking)
    # paid before its window: from + 15 minutes, not the granule's 10:15
    assert store.get_booking(booking.booking_id).kind_details["timer_at"] == f"{DAY}T10:25:00.000Z"
    token = parking.bookings.view(booking.booking_id, "alice")["entry_token"]
    payload = verify(token, unb64(lot["public_key"]["public_key"]), lot["lot_id"])
    assert (payload["from"], payload["to"]) == (f"{DAY}T10:10:00.000Z", f"{DAY}T11:40:00.000Z")
    gate = parking.create_gate(lot["lot_id"], "North")
    entry = {"kind": "entry", "token": token}
    # early entry is 15 minutes before 10:10, not before the granule's 10:00
    clock.now = datetime.fromisoformat(f"{DAY}T09:54:00+00:00")
    early = gates.apply(lot["lot_id"], gate["gate_id"], {**entry, "event_id": "e-1"}, at=clock(), offline=False)
    assert (early["gate_open"], early["reason"]) == (False, "outside_window")
    clock.now = datetime.fromisoformat(f"{DAY}T11:40:00+00:00")
    late = gates.apply(lot["lot_id"], gate["gate_id"], {**entry, "event_id": "e-2"}, at=clock(), offline=False)
    assert (late["gate_open"], late["reason"]) == (False, "outside_window")
    clock.now = datetime.fromisoformat(f"{DAY}T09:55:00+00:00")
    opened = gates.apply(lot["lot_id"], gate["gate_id"], {**entry, "event_id": "e-3"}, at=clock(), offline=False)
    assert opened["gate_open"] is True and opened["space_id"] == "R1"


def test_the_view_says_what_a_cancellation_now_gives_back_and_the_cancellation_does_that(parking, view_bookings,
                                                                                         payments, provider, clock):
    from holdfast.domain.texts import TEXTS

    spaces = [{"space_id": "R1", "type": "REGULAR"}]
    lots = {"full": make_lot(parking, spaces=spaces),
            "until": make_lot(parking, spaces=spaces, policy={"cancel_refund_until_minutes_before": 120}),
            "none": make_lot(parking, spaces=spaces, policy={"cancel_refund": "none"})}
    booked = {}
    for name, lot in lots.items():
        booked[name] = reserve(parking, lot, "REGULAR", "10:10", "11:40", customer=name, key=name)
        confirm(payments, provider, booked[name])
    clock.now = clock.now.replace(day=2, hour=8, minute=30)        # 100 minutes before 10:10
    views = {name: view_bookings.view(b.booking_id, name, "ru") for name, b in booked.items()}
    assert {name: (v["cancel_refund"], v["texts"]["cancel"], v.get("cancel_refund_until"))
            for name, v in views.items()} == {
        "full": (True, "cancel.refund_until", f"{DAY}T10:10:00.000Z"),
        "until": (False, "cancel.no_refund", None),                   # its refund ended at 08:10
        "none": (False, "cancel.no_refund", None)}
    assert views["none"]["cancel_next_step"] == TEXTS["ru"]["cancel.no_refund"]
    assert views["full"]["cancel_next_step"] == TEXTS["ru"]["cancel.refund_until"].format(until=f"{DAY}T10:10:00.000Z")
    for name, b in booked.items():
        done = view_bookings.cancel(b.booking_id, name, refund=payments.cancel_confirmed)
        assert (done.status in ("REFUND_PENDING", "REFUNDED")) is views[name]["cancel_refund"], name


def test_a_window_begun_before_it_is_paid_counts_its_no_show_from_the_payment(parking, payments, provider, clock,
                                                                               store, bookings):
    """Issue 42, finding 4: the no-show timer was the window's start plus the grace, already past
    when a window begun at the current half hour was paid; the next sweep made it NO_SHOW and kept
    the money. It counts from the later of the window's start and the confirmation."""
    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}])   # 900 s of grace
    clock.now = datetime.fromisoformat(f"{DAY}T10:20:00+00:00")
    booking = reserve(parking, lot, "REGULAR", "10:00", "12:00")
    clock.now = datetime.fromisoformat(f"{DAY}T10:28:00+00:00")
    confirm(payments, provider, booking)
    paid = store.get_booking(booking.booking_id)
    assert paid.timer == (f"{DAY}T10:43:00.000Z", "NO_SHOW")   # paid at 10:28, 15 minutes to arrive
    assert paid.due_at > iso(clock())


def test_a_gates_configuration_lists_paid_reservations_that_no_longer_admit_as_voided(
        parking, gates, view_bookings, payments, provider, clock, store):
    """A refunded reservation's token still verifies until its window ends: the gate must be told
    to refuse it offline. A held one (no token yet) and a confirmed one are not listed; one whose
    window ended is not either (its token no longer opens anything)."""
    lot = make_lot(parking, spaces=[{"space_id": f"R{n}", "type": "REGULAR"} for n in range(1, 5)])
    gate = parking.create_gate(lot["lot_id"], "North")
    lot_id, gate_id, key = lot["lot_id"], gate["gate_id"], gate["gate_key"]
    refunded = reserve(parking, lot, "REGULAR", "10:00", "12:00", customer="bob", plate="B1")
    confirm(payments, provider, refunded)
    view_bookings.cancel(refunded.booking_id, refunded.customer_id, refund=payments.cancel_confirmed)
    assert str(store.get_booking(refunded.booking_id).status) in ("REFUND_PENDING", "REFUNDED")
    kept = reserve(parking, lot, "REGULAR", "10:00", "12:00", customer="carol", plate="C1")
    confirm(payments, provider, kept)
    reserve(parking, lot, "REGULAR", "10:00", "12:00", customer="dave", plate="D1")          # held, never paid
    clock.now = clock.now.replace(day=2, hour=9, minute=0)

    config = parking.gate_config(lot_id, gate_id, key)
    assert config["voided_reservations"] == [refunded.booking_id]
    assert config["voided_valid_until"] == f"{DAY}T09:01:00.000Z"
    assert [r["booking_id"] for r in config["reservations"]] == [kept.booking_id]
    clock.now = clock.now.replace(hour=12, minute=0)                # the window is over: its token opens nothing
    assert parking.gate_config(lot_id, gate_id, key)["voided_reservations"] == []


def test_only_a_confirmed_reservation_admits_entry():
    """The gate decides by the doors' rule (domain/entry_rights.py), merged from the parking
    product's own copy of it (issue 42). The one difference of the copy: it listed a hold with a
    payment (HELD, PAYMENT_PENDING) as voided; such a booking was never CONFIRMED (nothing leads
    back to a hold from it), so it never had an entry token to refuse, and the list no longer
    carries it."""
    from holdfast.domain import entry_rights
    from holdfast.domain.statuses import BookingStatus
    from holdfast.products.parking.kind import CHECKED_IN, COMPLETED, NO_SHOW

    statuses = [*map(str, BookingStatus), CHECKED_IN, COMPLETED, NO_SHOW]
    assert [s for s in statuses if entry_rights.status_admits(s)] == ["CONFIRMED"]
    assert {s for s in statuses if entry_rights.status_revoked(s, had_payment=True)} == \
        set(statuses) - {"CONFIRMED", "HELD", "PAYMENT_PENDING"}
    assert not any(entry_rights.status_revoked(s, had_payment=False) for s in statuses)
