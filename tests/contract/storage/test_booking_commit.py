"""The one way to write (``Commits.commit``): a ``Change`` lands whole or not at all, and when it
writes nothing the outcome is named from the failed labels in one order (idempotency, booking,
the change's items, sale gate, hold limit, claims by unit)."""
from __future__ import annotations

from dataclasses import replace

import pytest
from botocore.exceptions import ClientError, ParamValidationError

from holdfast.adapters.expiry_buckets import bucket_of
from holdfast.domain.inventory import Granule, Move, Places, Swap
from holdfast.domain.statuses import BookingStatus
from holdfast.ports import (Change, DuplicateRequest, HoldLimitReached, HoldsFromAddressReached, ItemExists,
                            PlacesTaken, SalesStopped, StaleBooking)

from .bookings import AT, booking, counted, named, new_hold, offering, pools, step


def hold_counter(backend, customer: str, event_id: str):
    item = backend.raw(f"CUSTOMER#{customer}", f"HOLDS#EVENT#{event_id}")
    return None if item is None else item["active"]


def nothing_of(backend, booking_id: str) -> bool:
    """No trace of the booking: no item, no journal, no outbox."""
    return all(backend.raw(f"BOOKING#{booking_id}", sk) is None
               for sk in ("META", "JOURNAL#000001", "OUTBOX#000001"))


def test_a_new_hold_writes_the_booking_its_claims_record_and_indexes_together(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[5, 5])
    held = booking(ids("b"), event, counted(3, {"POOL#000": 2, "POOL#001": 1}), contact_email="ann@example.org")
    store.commit(new_hold(held, key=ids("k1")))
    assert store.get_booking(held.booking_id) == held
    stored, journal = store.get_booking_with_journal(held.booking_id)
    assert stored == held and [entry.action for entry in journal] == ["hold_created"]
    assert pools(store, event) == [("POOL#000", 3, 2, 0), ("POOL#001", 4, 1, 0)]
    record = store.get_idempotency("ann", ids("k1"), "booking")
    assert (record["fingerprint"], record["result_id"]) == (f"fp-{held.booking_id}", held.booking_id)
    assert record["ttl"] > 0 and store.get_idempotency("ann", ids("k1"), "booking", system=True) is None
    outbox = backend.raw(f"BOOKING#{held.booking_id}", "OUTBOX#000001")
    assert (outbox["type"], outbox["status"], outbox["version"], outbox["contact_email"]) == (
        "booking.held", "HELD", 1, "ann@example.org")
    assert store.customer_booking_ids("ann", event) == [held.booking_id]
    assert store.event_booking_ids(event) == [held.booking_id]
    assert held.booking_id in store.bucket_booking_ids(bucket_of(held.hold_expires_at))
    assert hold_counter(backend, "ann", event) == 1


def test_a_repeated_key_is_a_duplicate_request_before_every_other_failure(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[2])
    first = booking(ids("b1"), event, counted(2))
    store.commit(new_hold(first, key=ids("k1"), limit=1))
    store.mark_event_cancelled(event, "storm", ids("cancel"), "fp", AT)
    again = booking(ids("b2"), event, counted(2))     # no places left, gate closed, cap reached
    with pytest.raises(DuplicateRequest):
        store.commit(new_hold(again, key=ids("k1"), limit=1))
    assert nothing_of(backend, again.booking_id)
    assert pools(store, event) == [("POOL#000", 0, 2, 0)] and hold_counter(backend, "ann", event) == 1


def test_a_taken_booking_id_is_item_exists_and_takes_nothing(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[5])
    first = booking(ids("b"), event, counted(1))
    store.commit(new_hold(first, key=ids("k1")))
    with pytest.raises(ItemExists):
        store.commit(new_hold(replace(first, places=counted(2)), key=ids("k2")))
    assert pools(store, event) == [("POOL#000", 4, 1, 0)]
    assert store.get_idempotency("ann", ids("k2"), "booking") is None
    assert hold_counter(backend, "ann", event) == 1


def test_a_closed_sale_gate_is_sales_stopped_before_the_cap_and_the_places(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[1])
    store.commit(new_hold(booking(ids("b1"), event, counted(1)), limit=1))
    store.mark_event_cancelled(event, "storm", ids("cancel"), "fp", AT)
    late = booking(ids("b2"), event, counted(1))
    with pytest.raises(SalesStopped):
        store.commit(new_hold(late, limit=1))
    assert nothing_of(backend, late.booking_id) and store.event_booking_ids(event) == [ids("b1")]


def test_the_hold_limit_is_reached_before_the_places_and_counts_only_counted_holds(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[4])
    store.commit(new_hold(booking(ids("b1"), event, counted(1)), limit=2))
    store.commit(new_hold(booking(ids("b2"), event, counted(1)), limit=2))
    third = booking(ids("b3"), event, counted(5))                      # too many places as well
    with pytest.raises(HoldLimitReached):
        store.commit(new_hold(third, limit=2))
    assert nothing_of(backend, third.booking_id) and hold_counter(backend, "ann", event) == 2
    store.commit(new_hold(booking(ids("b4"), event, counted(1), counted_hold=False), limit=2))   # not counted
    store.commit(new_hold(booking(ids("b5"), event, counted(1), customer="ben"), limit=None))    # counted, no cap
    assert hold_counter(backend, "ann", event) == 2 and hold_counter(backend, "ben", event) == 1
    assert pools(store, event) == [("POOL#000", 0, 4, 0)]


def test_leaving_the_holding_statuses_frees_the_slot_in_the_same_write(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[3])
    first = booking(ids("b1"), event, counted(1))
    store.commit(new_hold(first, limit=1))
    paying = step(first, BookingStatus.PAYMENT_PENDING)
    store.commit(paying)                                                 # still holding: the slot stays
    assert hold_counter(backend, "ann", event) == 1
    store.commit(step(paying.after, BookingStatus.EXPIRED, Move.RELEASE))
    assert hold_counter(backend, "ann", event) == 0
    store.commit(new_hold(booking(ids("b2"), event, counted(1)), limit=1))
    assert pools(store, event) == [("POOL#000", 2, 1, 0)]


def address_counter(backend, address: str, event_id: str):
    item = backend.raw(f"HOLDS#ADDR#{address}", f"EVENT#{event_id}")
    return None if item is None else item["live_holds"]


def test_the_address_cap_counts_across_customers_and_every_end_gives_the_slot_back(backend, ids):
    """Issue 42, finding 13: one network's live holds of an offering, whatever customers hold; the
    customer's own cap is named first when both are reached."""
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[6])
    first = booking(ids("b1"), event, counted(1), counted_address="net-1")
    store.commit(new_hold(first, address_limit=2))
    store.commit(new_hold(booking(ids("b2"), event, counted(1), customer="ben", counted_address="net-1"),
                          address_limit=2))
    third = booking(ids("b3"), event, counted(1), customer="cid", counted_address="net-1")
    with pytest.raises(HoldsFromAddressReached):
        store.commit(new_hold(third, address_limit=2))
    assert nothing_of(backend, third.booking_id) and address_counter(backend, "net-1", event) == 2
    with pytest.raises(HoldLimitReached):                                # both caps: the customer's is named
        store.commit(new_hold(booking(ids("b4"), event, counted(1), counted_address="net-1"), limit=1,
                              address_limit=2))
    store.commit(new_hold(booking(ids("b5"), event, counted(1), customer="cid", counted_address="net-2"),
                          address_limit=2))
    paying = step(first, BookingStatus.PAYMENT_PENDING)
    store.commit(paying)                                                 # still live: the slot stays
    assert address_counter(backend, "net-1", event) == 2
    store.commit(step(paying.after, BookingStatus.EXPIRED, Move.RELEASE))
    assert address_counter(backend, "net-1", event) == 1                 # b2 still holds
    assert backend.raw(f"BOOKING#{first.booking_id}", "META").get("counted_address") is None
    store.commit(new_hold(third, address_limit=2))
    assert address_counter(backend, "net-1", event) == 2 and pools(store, event) == [("POOL#000", 3, 3, 0)]


def test_claims_that_fail_are_places_taken_by_unit_in_claim_order(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, units=["A-1", "A-2", "A-3", "A-4"])
    store.commit(new_hold(booking(ids("b1"), event, named("A-2"))))
    store.commit(new_hold(booking(ids("b2"), event, named("A-4"), customer="ben")))
    racer = booking(ids("b3"), event, named("A-4", "A-3", "A-2", "A-9"), customer="cat")   # A-9 does not exist
    with pytest.raises(PlacesTaken) as refused:
        store.commit(new_hold(racer))
    assert refused.value.failed == ["A-4", "A-2", "A-9"]
    assert nothing_of(backend, racer.booking_id)
    assert store.seat_states(event) == {"A-1": "available", "A-2": "held", "A-3": "available", "A-4": "held"}
    assert hold_counter(backend, "cat", event) is None


def test_a_pool_without_enough_places_is_places_taken_and_the_other_pool_is_untouched(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[2, 2])
    with pytest.raises(PlacesTaken) as refused:
        store.commit(new_hold(booking(ids("b"), event, counted(4, {"POOL#000": 1, "POOL#001": 3}))))
    assert refused.value.failed == ["POOL#001"]
    assert pools(store, event) == [("POOL#000", 2, 0, 0), ("POOL#001", 2, 0, 0)]
    with pytest.raises(PlacesTaken) as missing:
        store.commit(new_hold(booking(ids("b2"), event, counted(1, {"POOL#007": 1}))))
    assert missing.value.failed == ["POOL#007"]


def test_only_the_booking_that_holds_a_unit_moves_it_on(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, units=["A-1", "A-2"])
    ann = booking(ids("b1"), event, named("A-1"))
    store.commit(new_hold(ann))
    ben = booking(ids("b2"), event, named("A-2"), customer="ben")
    store.commit(new_hold(ben))
    thief = step(ben, BookingStatus.CONFIRMED, Move.SELL, places=named("A-1"))
    with pytest.raises(PlacesTaken) as refused:
        store.commit(thief)
    assert refused.value.failed == ["A-1"]
    assert store.get_booking(ben.booking_id).version == 1
    store.commit(step(ann, BookingStatus.CONFIRMED, Move.SELL))
    store.commit(step(ben, BookingStatus.EXPIRED, Move.RELEASE))
    assert store.read_units(event, ["A-1", "A-2", "A-0"]) == {
        "A-1": {"pk": store.unit_keys(event, ["A-1"])[0]["pk"], "sk": "UNIT#A-1", "event_id": event,
                "state": "sold", "booking_id": ann.booking_id},
        "A-2": {"pk": store.unit_keys(event, ["A-2"])[0]["pk"], "sk": "UNIT#A-2", "event_id": event,
                "state": "available"}}


def test_a_change_needs_the_version_it_read_and_writes_nothing_when_it_moved(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[4])
    held = booking(ids("b"), event, counted(2))
    store.commit(new_hold(held))
    first = step(held, BookingStatus.CONFIRMED, Move.SELL)
    store.commit(first)
    with pytest.raises(StaleBooking):                           # the same decision again, from version 1
        store.commit(step(held, BookingStatus.EXPIRED, Move.RELEASE))
    assert store.get_booking(held.booking_id) == replace(first.after, counted_hold=False)   # kept while holding
    assert pools(store, event) == [("POOL#000", 2, 0, 2)]
    assert [entry.action for entry in store.get_booking_with_journal(held.booking_id)[1]] == ["hold_created", "step"]
    with pytest.raises(StaleBooking):                           # a booking that was never written
        store.commit(step(booking(ids("ghost"), event, counted(1))))
    assert nothing_of(backend, ids("ghost"))


def test_a_change_must_be_one_version_ahead_and_a_hold_needs_its_record(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[4])
    held = booking(ids("b"), event, counted(1))
    with pytest.raises(ValueError):
        store.commit(replace(new_hold(held), idempotency=None))
    store.commit(new_hold(held))
    change = step(held, BookingStatus.CONFIRMED, Move.SELL)
    with pytest.raises(ValueError):
        store.commit(replace(change, after=replace(change.after, version=3)))
    assert store.get_booking(held.booking_id).version == 1 and pools(store, event) == [("POOL#000", 3, 1, 0)]


def test_places_taken_again_pass_the_sale_gate_and_a_sale_does_not(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[4])
    late, paid = booking(ids("b1"), event, counted(1)), booking(ids("b2"), event, counted(1))
    store.commit(new_hold(late))
    store.commit(new_hold(paid))
    expired = step(late, BookingStatus.EXPIRED, Move.RELEASE)
    store.commit(expired)
    store.mark_event_cancelled(event, "storm", ids("cancel"), "fp", AT)
    with pytest.raises(SalesStopped):                           # a late payment retakes released places
        store.commit(step(expired.after, BookingStatus.CONFIRMED, Move.RETAKE))
    assert store.get_booking(late.booking_id).status is BookingStatus.EXPIRED
    store.commit(step(paid, BookingStatus.CONFIRMED, Move.SELL))   # places it holds: no gate
    assert pools(store, event) == [("POOL#000", 3, 0, 1)]


def test_an_extra_item_that_fails_is_a_stale_booking_before_the_gate_and_writes_nothing(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[4])
    case = {"case_id": ids("case"), "opened_at": AT, "status": "OPEN", "lot_id": "lot-1"}
    store.commit(Change(items=(store.gate_case_put(case),)))
    assert store.get_gate_case(ids("case")) == case
    with pytest.raises(StaleBooking) as refused:                 # items alone: the failed label is named
        store.commit(Change(items=(store.sale_gate_check(event, "b-x"), store.gate_case_put({**case, "status": "NEW"}))))
    assert str(refused.value) == "case" and store.get_gate_case(ids("case"))["status"] == "OPEN"
    held = booking(ids("b"), event, counted(1))
    store.commit(new_hold(held, items=(store.gate_case_put({**case, "case_id": ids("with-hold")}),)))
    assert store.get_gate_case(ids("with-hold"))["status"] == "OPEN"
    store.commit(Change(items=(store.sale_gate_check(event, held.booking_id),)))      # open: passes
    store.mark_event_cancelled(event, "storm", ids("cancel"), "fp", AT)
    with pytest.raises(StaleBooking) as closed:
        store.commit(Change(items=(store.sale_gate_check(event, held.booking_id),)))
    assert "sale_gate" in str(closed.value)
    with pytest.raises(StaleBooking):                            # the item, not the closed gate
        store.commit(step(held, BookingStatus.EXPIRED, Move.RELEASE, items=(store.gate_case_put(case),)))
    assert store.get_booking(held.booking_id).version == 1 and pools(store, event) == [("POOL#000", 3, 1, 0)]
    with pytest.raises(StaleBooking):
        store.commit(new_hold(booking(ids("b2"), event, counted(1)), items=(store.gate_case_put(case),)))
    assert nothing_of(backend, ids("b2"))


def test_granules_are_taken_free_or_by_their_session_and_given_back_by_it(backend, ids):
    store, event, room = backend.store, ids("ev"), ids("room")
    offering(store, event)
    at = "2030-01-05T10:00:00.000Z"
    group = Granule(resource_id=room, at=at, seats=2, session=f"S#yoga#{at}", capacity=3)
    first = booking(ids("b1"), event, Places("slots", 2, granules=(group,)))
    store.commit(new_hold(first))
    assert store.read_granules(room, ["2030-01-05"])["2030-01-05T10:00"]["taken"] == 2
    with pytest.raises(PlacesTaken) as full:                   # 2 + 2 > 3 seats of the session
        store.commit(new_hold(booking(ids("b2"), event, Places("slots", 2, granules=(group,)), customer="ben")))
    assert full.value.failed == [f"{room}/{at}"]
    private = Granule(resource_id=room, at=at, seats=1, session="", capacity=1)
    with pytest.raises(PlacesTaken):                           # the whole room, while a session uses it
        store.commit(new_hold(booking(ids("b3"), event, Places("slots", 1, granules=(private,)), customer="cat")))
    store.commit(new_hold(booking(ids("b4"), event, Places("slots", 1, granules=(replace(group, seats=1),)),
                                  customer="dan")))
    store.commit(step(first, BookingStatus.EXPIRED, Move.RELEASE))
    other = replace(group, seats=1, session=f"S#pilates#{at}")
    with pytest.raises(PlacesTaken):                           # another session, though seats are left
        store.commit(new_hold(booking(ids("b5"), event, Places("slots", 1, granules=(other,)), customer="eve")))
    granule = store.read_granules(room, ["2030-01-05", "2030-01-06"])
    assert list(granule) == ["2030-01-05T10:00"]
    assert (granule["2030-01-05T10:00"]["taken"], granule["2030-01-05T10:00"]["held"]) == (1, 1)


def test_a_transaction_over_a_hundred_items_is_refused_whole(backend, ids):
    store, event = backend.store, ids("ev")
    seats = [f"S-{n:03d}" for n in range(95)]
    offering(store, event, units=seats)
    big = booking(ids("b"), event, named(*seats))              # 95 claims and 9 items of its own
    with pytest.raises(ClientError) as refused:
        store.commit(new_hold(big))
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert nothing_of(backend, big.booking_id) and set(store.seat_states(event).values()) == {"available"}


def test_a_change_of_nothing_is_refused_before_it_is_sent(backend):
    with pytest.raises(ParamValidationError):
        backend.store.commit(Change())


def test_a_number_that_is_not_a_decimal_is_refused_before_anything_is_written(backend, ids):
    store, event = backend.store, ids("ev")
    offering(store, event, pools=[2])
    odd = booking(ids("b"), event, counted(1), kind_details={"ratio": 0.5})
    with pytest.raises(TypeError):
        store.commit(new_hold(odd, key=ids("k")))
    assert nothing_of(backend, odd.booking_id) and pools(store, event) == [("POOL#000", 2, 0, 0)]
    assert store.get_idempotency("ann", ids("k"), "booking") is None      # the item before the booking
    assert hold_counter(backend, "ann", event) is None


def test_places_of_several_offerings_are_claimed_indexed_and_gated_each_in_their_own_offering(backend, ids):
    """An order's places (products/orders): pool and seat ids qualified by their offering are that
    offering's items; each further offering gets the booking's index entry and marker, and its
    closed sale gate refuses the whole hold. Moves later take every offering's items back."""
    from holdfast.domain.claims import of_offering

    store, first, second = backend.store, ids("ev1"), ids("ev2")
    offering(store, first, pools=[3])
    offering(store, second, units=["A-1", "A-2"])
    places = Places("order", 3, pools=((of_offering(first, "POOL#000"), 2),), units=(of_offering(second, "A-1"),))
    held = booking(ids("b"), first, places)
    store.commit(new_hold(held, key=ids("k1")))
    assert pools(store, first) == [("POOL#000", 1, 2, 0)]
    assert store.seat_states(second)["A-1"] == "held" and store.seat_states(second)["A-2"] == "available"
    assert store.event_booking_ids(second) == [held.booking_id] == store.event_booking_ids(first)
    assert store.customer_booking_ids("ann", second) == [held.booking_id]
    store.commit(step(held, BookingStatus.EXPIRED, Move.RELEASE))
    assert pools(store, first) == [("POOL#000", 3, 0, 0)] and store.seat_states(second)["A-1"] == "available"
    # the second offering is cancelled: a hold of both writes nothing
    store.mark_event_cancelled(second, "storm", ids("cancel"), "fp", AT)
    again = booking(ids("b2"), first, places)
    with pytest.raises(SalesStopped) as stopped:
        store.commit(new_hold(again, key=ids("k2")))
    assert stopped.value.args[0] == second
    assert nothing_of(backend, again.booking_id) and pools(store, first) == [("POOL#000", 3, 0, 0)]


def test_a_swap_gives_back_and_takes_in_one_write_or_nothing(backend, ids):
    """An exchange (issue 45): the places given back and the ones taken, in one transaction; a
    taken place gone is PlacesTaken, a given one moved is StaleBooking, and either writes nothing."""
    store, event, later = backend.store, ids("ev"), ids("later")
    offering(store, event, units=["A-1", "A-2", "A-3"])
    offering(store, later, pools=[3])
    ann = booking(ids("b1"), event, named("A-1"))
    store.commit(new_hold(ann))
    sold = step(ann, BookingStatus.CONFIRMED, Move.SELL)
    store.commit(sold)
    ben = booking(ids("b2"), event, named("A-2"), customer="ben")
    store.commit(new_hold(ben))
    owned = sold.after
    with pytest.raises(PlacesTaken) as refused:                 # A-2 is ben's
        store.commit(step(owned, places=named("A-2"), swap=Swap(event, named("A-1"), event, named("A-2"))))
    assert refused.value.failed == ["A-2"]
    with pytest.raises(StaleBooking):                           # A-3 was never ann's to give back
        store.commit(step(owned, places=named("A-1"), swap=Swap(event, named("A-3"), later, counted(1, {"POOL#000": 1}))))
    assert store.get_booking(ann.booking_id).version == 2
    assert {unit: item["state"] for unit, item in store.read_units(event, ["A-1", "A-2", "A-3"]).items()} == {
        "A-1": "sold", "A-2": "held", "A-3": "available"}
    moved = step(owned, places=counted(1, {"POOL#000": 1}), swap=Swap(event, named("A-1"), later,
                                                                    counted(1, {"POOL#000": 1})))
    moved = replace(moved, after=replace(moved.after, event_id=later))
    store.commit(moved)
    assert store.get_booking(ann.booking_id).event_id == later
    assert store.read_units(event, ["A-1"])["A-1"]["state"] == "available"
    assert pools(store, later) == [("POOL#000", 2, 0, 1)]
    assert ann.booking_id in store.event_booking_ids(later)    # the new offering's cancellation finds it
    store.mark_event_cancelled(later, "storm", ids("cancel"), "fp", AT)
    back = step(moved.after, places=named("A-3"), swap=Swap(later, counted(1, {"POOL#000": 1}), event, named("A-3")))
    with pytest.raises(SalesStopped):                           # a cancelled offering's booking stays its own
        store.commit(replace(back, after=replace(back.after, event_id=event)))
    assert store.get_booking(ann.booking_id).event_id == later


def test_a_swap_to_another_offering_moves_the_sale_and_keeps_the_old_offerings_entry(backend, ids):
    """An exchange that moves a confirmed booking: in the same write its entry in the new
    offering's index is listed among that offering's sales (gsi1 ``SOLD#``) and the old
    offering's entry is no longer; the old entry itself stays (the old offering's doors void the
    tickets the booking had there by it)."""
    store, event, later = backend.store, ids("ev"), ids("later")
    offering(store, event, pools=[3])
    offering(store, later, pools=[3])
    ann = booking(ids("b1"), event, counted(1))
    store.commit(new_hold(ann))
    sold = step(ann, BookingStatus.CONFIRMED, Move.SELL)
    store.commit(sold)
    assert [b for _, b in store.sold_positions(event, None, 10)] == [ann.booking_id]
    moved = step(sold.after, places=counted(1), swap=Swap(event, counted(1), later, counted(1)))
    moved = replace(moved, after=replace(moved.after, event_id=later))
    store.commit(moved)
    assert [b for _, b in store.sold_positions(later, None, 10)] == [ann.booking_id]
    assert store.sold_positions(event, None, 10) == []
    assert ann.booking_id in store.event_booking_ids(event) and ann.booking_id in store.event_booking_ids(later)
    back = step(moved.after, places=counted(1), swap=Swap(later, counted(1), event, counted(1)))
    store.commit(replace(back, after=replace(back.after, event_id=event)))
    assert [b for _, b in store.sold_positions(event, None, 10)] == [ann.booking_id]
    assert store.sold_positions(later, None, 10) == []
