"""A customer's erasure (services/personal_data.py over adapters/personal_data_store.py) leaves
none of their personal values anywhere in the table: after a booking whose tickets were scanned at
a door with a check-in case, a parking reservation with a plate, its ticket and a gate case, a
waitlist turn with its offer, a mailed notification and the address's confirmation, the whole
table is read and no item names the customer's id, name, address or plate. The address's
suppression (a digest, no customer's) stays, as docs/data-model.md says. What the money and the
journal need stays (the bookings, their amounts and statuses, the ticket's charge, the cases).

The erasure is the adapter's (moto and DynamoDB Local); the in-memory fake has no erasure."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from holdfast.clock import iso
from holdfast.domain.inventory import Granule, Move, Places
from holdfast.domain.statuses import BookingStatus
from holdfast.ports import Change
from holdfast.products.events.services import doors
from holdfast.products.parking.services import gate_cases
from holdfast.services import checkin_cases
from holdfast.services.mail_policy import address_key
from holdfast.services.personal_data import PersonalDataService

from .bookings import AT, booking, counted, new_hold, offering, step

LATER = datetime(2030, 6, 1, tzinfo=timezone.utc)
ENDED = "2030-01-01T20:00:00.000Z"


def hold(held, key: str, system: bool = False) -> Change:
    """A new hold as the service writes it: its journal names the request's key."""
    change = new_hold(held, key=key)
    return replace(change, journal=replace(change.journal, ids={"booking_id": held.booking_id, "idempotency_key": key}),
                   idempotency=replace(change.idempotency, system=system))


def every_item(backend) -> list[dict[str, Any]]:
    client, table = backend.store.db.client, backend.store.db.table
    deserializer, items, start = TypeDeserializer(), [], None
    while True:
        page = client.scan(TableName=table, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {}))
        items += [{k: deserializer.deserialize(v) for k, v in item.items()} for item in page.get("Items", [])]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def texts(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (str(k), *texts(v))]
    if isinstance(value, (list, tuple, set)):
        return [t for v in value for t in texts(v)]
    return [str(value)]


def naming(items: list[dict[str, Any]], values: list[str]) -> list[tuple[str, str, str]]:
    return [(item["pk"], item["sk"], value) for item in items for value in values
            if any(value.lower() in text.lower() for text in texts(item))]


def test_an_erased_customer_is_named_by_no_item_of_the_table(backend, ids):
    if backend.name == "fake":
        pytest.skip("the in-memory fake has no erasure (adapters/personal_data_store.py)")
    store = backend.store
    customer, name, email, plate = ids("cust"), "Anna Petrova", f"{ids('mail')}@example.org", ids("plate").upper()

    # a booking of an event, its two tickets scanned at a door, the second twice offline: a case
    event = ids("event")
    offering(store, event, pools=[4])
    held = booking(ids("b-event"), event, counted(2), customer=customer, contact_email=email, ends_at=ENDED)
    store.commit(hold(held, f"{customer}-typed-key"))
    sold = step(held, BookingStatus.CONFIRMED, Move.SELL)
    store.commit(sold)
    assert backend.surge.put_entry(event, customer, 1, 1_893_499_200_000, None)   # the waiting room let them in
    door, ticket_id = ids("door"), f"{held.booking_id}-1"
    store.commit(Change(items=(
        store.checkin_put(event, {"ticket_id": ticket_id, "booking_id": held.booking_id, "door_id": door,
                                  "checked_in_at": AT, "pass_id": "p-1", "mode": "offline"}),
        store.door_pass_put(event, door, "p-1", {"admitted": True, "ticket_id": ticket_id}, AT, offline=True,
                            body={"token": "ab12"}))))
    case = checkin_cases.new_case(checkin_cases.case_id(doors.CASE_NAMESPACE, event, door, "p-2"), "checkin",
                                  ("event_id", event), "double_checkin", AT, "door_sync", "checkin_case_opened",
                                  door_id=door, pass_id="p-2", at=AT, ticket_id=ticket_id, booking_id=held.booking_id)
    store.commit(Change(items=(store.checkin_case_put(case),)))

    # a parking reservation with the plate, the ticket its car entered on and a gate case about it
    lot = ids("lot")
    offering(store, lot)
    details = {"space_id": "R1", "plate": plate, "vehicle_type": "REGULAR", "from": "2030-01-02T10:00:00.000Z",
               "to": "2030-01-02T12:00:00.000Z"}
    reserved = booking(ids("b-lot"), lot, Places("parking", 1, granules=(Granule(f"{lot}|R1", "2030-01-02T10:00"),)),
                       customer=customer, contact_email=email, kind_details=details, ends_at="2030-01-02T12:00:00.000Z")
    store.commit(hold(reserved, ids("key")))
    store.commit(step(reserved, BookingStatus.CONFIRMED, Move.SELL))
    ticket = {"ticket_id": ids("ticket"), "lot_id": lot, "space_id": "R1", "space_type": "REGULAR", "plate": plate,
              "entered_at": "2030-01-02T10:05:00.000Z", "status": "OPEN", "gate_id": "g1", "entry_event_id": "e1",
              "booking_id": reserved.booking_id, "customer_id": customer, "prepaid": "100.00"}
    store.commit(Change(items=tuple(store.ticket_open(ticket))))
    store.commit(Change(items=tuple(store.ticket_close(ticket, "2030-01-02T11:00:00.000Z", "100.00"))))
    gate_case = gate_cases.new_case(gate_cases.case_id(lot, "entry", "g1", "e2"), "entry", lot, "already_inside",
                                    AT, "gate_sync", gate_id="g1", event_id="e2", at=AT, basis="plate", plate=plate,
                                    booking_id=reserved.booking_id)
    store.commit(Change(items=tuple(store.gate_case_items(gate_case))))

    # a waitlist turn for a sold-out event: offered a hold (the system's key), which lapsed
    sold_out = ids("sold-out")
    offering(store, sold_out, pools=[1])
    entry = {"entry_id": ids("entry"), "customer_id": customer, "quantity": 1, "joined_at": AT,
             "queue_sk": store.waitlist_queue_key(AT, ids("entry")), "state": "WAITING", "contact_email": email}
    assert store.waitlist_join(sold_out, entry, ("PASSED", "DONE", "SKIPPED"))
    head = store.waitlist_head(sold_out)
    assert store.waitlist_claim(sold_out, head, AT)
    offered = booking(ids("b-offer"), sold_out, counted(1), customer=customer, contact_email=email)
    key = f"waitlist-offer-{entry['entry_id']}"
    store.commit(hold(offered, key, system=True))
    offer = next(o for o in store.waitlist_offers(sold_out) if o["entry_id"] == entry["entry_id"])
    assert store.waitlist_offered(sold_out, offer, offered.booking_id, AT)
    store.commit(step(offered, BookingStatus.EXPIRED, Move.RELEASE))
    offer = next(o for o in store.waitlist_offers(sold_out) if o["entry_id"] == entry["entry_id"])
    assert store.waitlist_close(sold_out, offer, "PASSED")

    # and a line they are still waiting in, for an event they never held places for
    waiting = ids("still-sold-out")
    offering(store, waiting, pools=[1])
    assert store.waitlist_join(waiting, {**entry, "entry_id": ids("entry-2"), "state": "WAITING",
                                         "queue_sk": store.waitlist_queue_key(AT, ids("entry-2"))}, ())

    # a mailed notification that greets them by name, and the address they confirmed
    assert store.record_notification(customer, f"{held.booking_id}#000002", {
        "type": "booking.confirmed", "booking_id": held.booking_id, "channel": "email", "delivery": "sent",
        "subject": f"{name}, your places are yours", "message": f"Dear {name}, we will write to {email}."})
    assert backend.mail.request_confirmation(customer, address_key(email), "f" * 64, "2030-01-02T00:00:00.000Z", AT)
    # the address bounced later: the suppression names the address by its digest, and stays
    assert backend.mail.suppress(address_key(email), "bounce", AT)

    personal = [customer, name, email, plate]
    before = naming(every_item(backend), personal)
    assert {(pk.split("#")[0], sk.split("#")[0]) for pk, sk, _ in before} >= {
        ("BOOKING", "META"), ("CUSTOMER", "NOTE"), ("CUSTOMER", "CONTACT"), ("IDEM", "booking"),
        ("SYSIDEM", "booking"), ("TICKET", "META"), ("GATECASE", "META"), ("WAITLIST", "CUST"), ("WAITLIST", "Q"),
        ("QUEUE", "ENTRY")}

    answer = PersonalDataService(store, lambda: LATER, b"k" * 32).forget(customer)
    assert answer["erased"] == 3
    after = every_item(backend)
    assert naming(after, personal) == []
    # what the money and the operators need is still there, without the person
    kept = {(item["pk"], item["sk"]): item for item in after}
    assert kept[(f"BOOKING#{held.booking_id}", "META")]["status"] == "CONFIRMED"
    assert kept[(f"TICKET#{ticket['ticket_id']}", "META")]["charge"] == "100.00"
    assert kept[(f"GATECASE#{gate_case['case_id']}", "META")]["booking_id"] == reserved.booking_id
    assert kept[(f"CHECKINCASE#{case['case_id']}", "META")]["reason"] == "double_checkin"
    assert store.waitlist_head(waiting) is None                              # they left the line
    assert (f"MAIL#{address_key(email)}", "SUPPRESSED") in kept                # no customer's: it outlives them
    # a repeat finds nothing left to change
    assert PersonalDataService(store, lambda: LATER, b"k" * 32).forget(customer) == {"erased": 0}


def test_erasing_an_old_ended_hold_keeps_the_waiting_room_number_taken_since(backend, ids):
    """Issue 42, finding 7: the retention sweep erasing an old hold of an event deleted the
    customer's current number in that event's waiting room, taken after the hold had ended."""
    if backend.name == "fake":
        pytest.skip("the in-memory fake has no erasure (adapters/personal_data_store.py)")
    store, customer, event = backend.store, ids("cust"), ids("event")
    offering(store, event, pools=[4])
    held = booking(ids("b-old"), event, counted(1), customer=customer)
    store.commit(hold(held, f"{customer}-k"))
    store.commit(step(held, BookingStatus.EXPIRED, Move.RELEASE))
    taken_later = int(LATER.timestamp() * 1000) - 60_000        # a minute before the sweep, long after the hold
    assert backend.surge.put_entry(event, customer, 7, taken_later, None)
    # the sweep's own step for this booking (the package's table holds other cases' ended bookings,
    # which erase_ended would count too)
    sweep = PersonalDataService(store, lambda: LATER, b"k" * 32, retention_days=1)
    assert sweep.erase(held.booking_id, ended_by=iso(LATER - timedelta(days=1))) is True
    number = store.db._get(f"QUEUE#{event}#CUST#{customer}", "ENTRY")
    assert number is not None and int(number["seq"]) == 7
