"""Waitlist: a line per event, in order of joining; an entry leaves the queue as an offer (PENDING,
then OFFERED) or is skipped; every step is conditional on the state it moves from, all or nothing
(services/waitlist.py)."""
from __future__ import annotations

from decimal import Decimal

REJOINABLE = ("LEFT", "PASSED", "SKIPPED", "DONE")


def join(backend, event: str, customer: str, at: str, entry_id: str | None = None, **more) -> dict:
    entry_id = entry_id or f"e-{customer}"
    entry = {"entry_id": entry_id, "customer_id": customer, "quantity": 2, "joined_at": at,
             "queue_sk": backend.waitlist.waitlist_queue_key(at, entry_id), "state": "WAITING", **more}
    assert backend.waitlist.waitlist_join(event, entry, REJOINABLE) is True
    return entry


def claim_head(backend, event: str, at: str = "2030-01-01T12:00:00.000Z") -> dict:
    waitlist = backend.waitlist
    assert waitlist.waitlist_claim(event, waitlist.waitlist_head(event), at) is True
    return waitlist.waitlist_offers(event)[0]


def test_joining_stores_the_entry_and_queues_it_in_order_of_joining(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    assert waitlist.waitlist_head(event) is None
    ann = join(backend, event, "ann", "2030-01-01T10:00:01.000Z", contact_email="ann@example.com")
    ben = join(backend, event, "ben", "2030-01-01T10:00:00.000Z")      # joined earlier: first in line
    assert waitlist.waitlist_entry(event, "ann") == {"pk": f"WAITLIST#{event}", "sk": "CUST#ann", **ann}
    assert isinstance(waitlist.waitlist_entry(event, "ann")["quantity"], Decimal)
    assert waitlist.waitlist_position(event, ben["queue_sk"]) == 1
    assert waitlist.waitlist_position(event, ann["queue_sk"]) == 2
    assert waitlist.waitlist_position(event, waitlist.waitlist_queue_key("2030", "nobody")) == 0
    assert waitlist.waitlist_head(event) == {
        "pk": f"WAITLIST#{event}", "sk": ben["queue_sk"], "entry_id": "e-ben", "customer_id": "ben",
        "quantity": 2, "joined_at": "2030-01-01T10:00:00.000Z"}


def test_a_customer_on_the_list_cannot_join_again_and_nothing_changes(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    first = join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    again = {**first, "entry_id": "e-2", "queue_sk": waitlist.waitlist_queue_key("2030-01-01T10:00:05.000Z", "e-2")}
    assert waitlist.waitlist_join(event, again, REJOINABLE) is False
    assert waitlist.waitlist_entry(event, "ann")["entry_id"] == first["entry_id"]
    assert waitlist.waitlist_position(event, again["queue_sk"]) == 0
    assert waitlist.waitlist_join(event, again, ()) is False


def test_a_skipped_customer_rejoins_at_the_back_with_a_fresh_entry(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    join(backend, event, "ben", "2030-01-01T10:00:01.000Z")
    assert waitlist.waitlist_skip(event, waitlist.waitlist_head(event), "quantity_too_large") is True
    skipped = waitlist.waitlist_entry(event, "ann")
    assert skipped["state"] == "SKIPPED" and skipped["reason"] == "quantity_too_large"
    back = join(backend, event, "ann", "2030-01-01T10:00:02.000Z", entry_id="e-ann-2")
    assert waitlist.waitlist_entry(event, "ann") == {"pk": f"WAITLIST#{event}", "sk": "CUST#ann", **back}   # no reason left
    assert waitlist.waitlist_position(event, back["queue_sk"]) == 2


def test_leaving_needs_the_same_waiting_entry(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    ann = join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    ben = join(backend, event, "ben", "2030-01-01T10:00:01.000Z")
    assert waitlist.waitlist_leave(event, "ann", {**ann, "entry_id": "stale"}) is False
    assert waitlist.waitlist_position(event, ann["queue_sk"]) == 1
    assert waitlist.waitlist_leave(event, "ann", ann) is True
    assert waitlist.waitlist_entry(event, "ann") is None
    assert waitlist.waitlist_position(event, ben["queue_sk"]) == 1
    assert waitlist.waitlist_leave(event, "ann", ann) is False
    claim_head(backend, event)
    assert waitlist.waitlist_leave(event, "ben", ben) is False               # OFFERING, not WAITING
    assert waitlist.waitlist_entry(event, "ben")["state"] == "OFFERING"


def test_a_claim_takes_the_head_off_the_queue_once(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    ann = join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    join(backend, event, "ben", "2030-01-01T10:00:01.000Z")
    head = waitlist.waitlist_head(event)
    assert waitlist.waitlist_claim(event, head, "2030-01-01T12:00:00.000Z") is True
    assert waitlist.waitlist_claim(event, head, "2030-01-01T12:00:01.000Z") is False    # the racing relay
    assert waitlist.waitlist_offers(event) == [{
        "pk": f"WAITLIST#{event}", "sk": "OFFER#e-ann", "entry_id": "e-ann", "customer_id": "ann", "quantity": 2,
        "joined_at": "2030-01-01T10:00:00.000Z", "queue_sk": ann["queue_sk"], "state": "PENDING",
        "claimed_at": "2030-01-01T12:00:00.000Z"}]
    assert waitlist.waitlist_entry(event, "ann")["state"] == "OFFERING"
    assert waitlist.waitlist_head(event)["customer_id"] == "ben"


def test_a_claim_for_an_entry_that_was_replaced_writes_nothing(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    head = {**waitlist.waitlist_head(event), "entry_id": "e-old"}
    assert waitlist.waitlist_claim(event, head, "2030-01-01T12:00:00.000Z") is False
    assert waitlist.waitlist_offers(event) == []
    assert waitlist.waitlist_head(event)["entry_id"] == "e-ann"


def test_a_pending_offer_becomes_offered_once_and_then_closes(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    offer = claim_head(backend, event)
    assert waitlist.waitlist_close(event, offer, "DONE") is False             # not OFFERED yet
    assert waitlist.waitlist_offered(event, offer, "b1", "2030-01-01T12:15:00.000Z") is True
    assert waitlist.waitlist_offered(event, offer, "b2", "2030-01-01T12:15:00.000Z") is False
    offered = waitlist.waitlist_offers(event)[0]
    assert offered["state"] == "OFFERED" and offered["booking_id"] == "b1"
    entry = waitlist.waitlist_entry(event, "ann")
    assert (entry["state"], entry["booking_id"], entry["hold_expires_at"]) == ("OFFERED", "b1", "2030-01-01T12:15:00.000Z")
    for refused in (waitlist.waitlist_unclaim(event, offered), waitlist.waitlist_offer_failed(event, offered, 1),
                    waitlist.waitlist_drop_offer(event, offered, "x")):
        assert refused is False
    assert waitlist.waitlist_close(event, offered, "PASSED") is True
    assert waitlist.waitlist_close(event, offered, "DONE") is False
    assert waitlist.waitlist_offers(event) == []
    assert waitlist.waitlist_entry(event, "ann")["state"] == "PASSED"


def test_an_unclaimed_offer_goes_back_to_its_old_place_in_line(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    ann = join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    offer = claim_head(backend, event)
    ben = join(backend, event, "ben", "2030-01-01T10:00:01.000Z")
    assert waitlist.waitlist_position(event, ben["queue_sk"]) == 1
    assert waitlist.waitlist_unclaim(event, offer) is True
    assert waitlist.waitlist_unclaim(event, offer) is False
    assert waitlist.waitlist_offers(event) == []
    assert waitlist.waitlist_head(event)["sk"] == ann["queue_sk"]
    assert waitlist.waitlist_position(event, ben["queue_sk"]) == 2
    assert waitlist.waitlist_entry(event, "ann")["state"] == "WAITING"


def test_failures_are_counted_on_a_pending_offer_and_a_dropped_one_is_skipped(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    join(backend, event, "ann", "2030-01-01T10:00:00.000Z")
    offer = claim_head(backend, event)
    assert waitlist.waitlist_offer_failed(event, offer, 1) is True
    assert waitlist.waitlist_offer_failed(event, offer, 2) is True
    assert waitlist.waitlist_offers(event)[0]["failures"] == 2
    assert waitlist.waitlist_drop_offer(event, offer, "hold_failed") is True
    assert waitlist.waitlist_drop_offer(event, offer, "hold_failed") is False
    entry = waitlist.waitlist_entry(event, "ann")
    assert (entry["state"], entry["reason"]) == ("SKIPPED", "hold_failed")
    assert waitlist.waitlist_offers(event) == [] and waitlist.waitlist_head(event) is None


def test_offers_are_listed_by_entry_and_events_are_apart(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    for n, customer in enumerate(("cat", "ann", "ben")):
        join(backend, event, customer, f"2030-01-01T10:00:0{n}.000Z", entry_id=f"e-{customer}")
    for _ in range(3):
        claim_head(backend, event)
    assert [offer["entry_id"] for offer in waitlist.waitlist_offers(event)] == ["e-ann", "e-ben", "e-cat"]
    assert waitlist.waitlist_offers(ids("other")) == [] and waitlist.waitlist_entry(ids("other"), "ann") is None


def test_position_counts_a_long_line(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    entries = [join(backend, event, f"c{n:03d}", f"2030-01-01T10:{n // 60:02d}:{n % 60:02d}.000Z") for n in range(40)]
    assert [waitlist.waitlist_position(event, entries[n]["queue_sk"]) for n in (0, 17, 39)] == [1, 18, 40]


def test_a_sections_entry_carries_its_zone_through_the_queue_and_its_offer_and_the_line_reads_in_order(backend, ids):
    waitlist, event = backend.waitlist, ids("ev")
    assert waitlist.waitlist_line(event, 10) == []
    join(backend, event, "ann", "2030-01-01T10:00:01.000Z", zone="floor")
    join(backend, event, "ben", "2030-01-01T10:00:00.000Z", price_category="balcony")
    join(backend, event, "cat", "2030-01-01T10:00:02.000Z")
    line = waitlist.waitlist_line(event, 10)
    assert [(e["customer_id"], e.get("zone"), e.get("price_category")) for e in line] == [
        ("ben", None, "balcony"), ("ann", "floor", None), ("cat", None, None)]
    assert [e["customer_id"] for e in waitlist.waitlist_line(event, 2)] == ["ben", "ann"]
    assert waitlist.waitlist_claim(event, line[1], "2030-01-01T12:00:00.000Z") is True
    [offer] = waitlist.waitlist_offers(event)
    assert (offer["customer_id"], offer["zone"]) == ("ann", "floor") and "price_category" not in offer
    assert [e["customer_id"] for e in waitlist.waitlist_line(event, 10)] == ["ben", "cat"]
