"""Parking's store part (products/parking/adapters/store.py), reached through the table's store as
the services reach it: gates and subscriptions, a lot's granules read whole, tickets, passes and
exit payments committed as a ``Change`` of items (a failed condition is a ``StaleBooking`` naming
the items' labels, nothing written), and gate cases listed while open and resolved once."""
from __future__ import annotations

import time
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

from holdfast.domain.inventory import Granule, Move, Places
from holdfast.domain.statuses import BookingStatus
from .bookings import AT, booking, new_hold, offering, step
from .cases import check_cases, commit, refused

DAYS_7 = 7 * 86_400


def ticket(ids, name: str = "t", plate: str = "A1", **more) -> dict:
    return {"ticket_id": ids(name), "lot_id": ids("lot"), "plate": plate, "space_id": "R1",
            "space_type": "REGULAR", "status": "OPEN", "entered_at": AT, **more}


# ------------------------------------------------------------------------------------ gates

def test_a_gate_is_put_once_and_changed_only_while_it_stands(backend, ids):
    store, lot, gate_id = backend.store, ids("lot"), ids("gate")
    gate = {"gate_id": gate_id, "name": "North", "key_sha256": "a" * 64, "created_at": AT}
    store.put_gate(lot, gate)
    assert store.get_gate(lot, gate_id) == {"pk": f"LOT#{lot}", "sk": f"GATE#{gate_id}", **gate}
    with pytest.raises(ClientError) as again:
        store.put_gate(lot, {**gate, "name": "Other"})
    assert again.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert store.get_gate(lot, gate_id)["name"] == "North"
    assert store.change_gate(lot, gate_id, {"key_sha256": "b" * 64, "key_rotated_at": AT}) is True
    assert store.get_gate(lot, gate_id)["key_sha256"] == "b" * 64
    assert store.change_gate(lot, ids("no-gate"), {"name": "x"}) is False
    assert store.get_gate(lot, ids("no-gate")) is None                     # nothing made
    assert store.change_gate(lot, gate_id, {"deleted_at": AT}) is True
    assert store.change_gate(lot, gate_id, {"key_sha256": "c" * 64}) is False
    assert store.get_gate(lot, gate_id)["key_sha256"] == "b" * 64


def test_a_lots_gates_are_listed_whole_deleted_ones_too_and_no_other_item(backend, ids):
    store, lot = backend.store, ids("lot")
    assert store.list_gates(lot) == []
    made = [{"gate_id": ids(f"gate-{n}"), "name": f"G{n}", "key_sha256": "a" * 64, "created_at": AT} for n in (1, 2)]
    for gate in made:
        store.put_gate(lot, gate)
    store.change_gate(lot, made[1]["gate_id"], {"deleted_at": AT})
    store.put_subscription(lot, {"subscription_id": "s1", "plate": "A1", "valid_from": AT, "valid_to": AT})
    store.put_gate(ids("other-lot"), {**made[0], "gate_id": ids("elsewhere")})
    listed = sorted(store.list_gates(lot), key=lambda gate: gate["name"])
    assert listed == [{"pk": f"LOT#{lot}", "sk": f"GATE#{made[0]['gate_id']}", **made[0]},
                      {"pk": f"LOT#{lot}", "sk": f"GATE#{made[1]['gate_id']}", **made[1], "deleted_at": AT}]


def test_subscriptions_are_found_by_their_plate_and_not_by_a_longer_one(backend, ids):
    store, lot = backend.store, ids("lot")
    subs = [{"subscription_id": f"s{n}", "plate": plate, "valid_from": AT, "valid_to": "2031-01-01T00:00:00Z"}
            for n, plate in ((2, "A1"), (1, "A1"), (3, "A12"))]
    for sub in subs:
        store.put_subscription(lot, sub)
    assert [s["subscription_id"] for s in store.subscriptions(lot, "A1")] == ["s1", "s2"]   # by key
    assert [s["subscription_id"] for s in store.subscriptions(lot)] == ["s1", "s2", "s3"]
    assert store.subscriptions(lot, "A1")[0] == {"pk": f"LOT#{lot}", "sk": "SUB#A1#s1", **subs[1]}
    store.put_subscription(lot, {**subs[0], "valid_to": AT})                # the same one again: replaced
    assert [s["valid_to"] for s in store.subscriptions(lot, "A1")] == ["2031-01-01T00:00:00Z", AT]
    assert store.subscriptions(ids("other-lot")) == []


# ---------------------------------------------------------------------------------- tickets

def test_a_ticket_opens_once_per_plate_and_its_marker_finds_it(backend, ids):
    store, lot = backend.store, ids("lot")
    first = ticket(ids)
    commit(store, *store.ticket_open(first))
    stored = store.get_ticket(first["ticket_id"])
    assert stored == {"pk": f"TICKET#{first['ticket_id']}", "sk": "META", **first}
    assert store.open_ticket_of(lot, "A1") == stored and store.open_ticket_of(lot, "B2") is None
    assert store.open_tickets(lot) == [{"pk": f"LOT#{lot}", "sk": "OPEN#A1", "ticket_id": first["ticket_id"],
                                        "space_id": "R1", "space_type": "REGULAR"}]
    second = ticket(ids, "t2", space_id="R2")                               # the same plate again
    assert refused(store, *store.ticket_open(second)) == "open"
    assert store.get_ticket(second["ticket_id"]) is None                   # all or nothing
    assert refused(store, *store.ticket_open(first)) == "ticket, open"


def test_a_ticket_closes_once_and_its_plate_may_come_again(backend, ids):
    store, lot = backend.store, ids("lot")
    first = ticket(ids)
    commit(store, *store.ticket_open(first))
    commit(store, *store.ticket_close(first, "2030-01-01T13:00:00.000Z", "100.00"))
    closed = store.get_ticket(first["ticket_id"])
    assert (closed["status"], closed["exited_at"], closed["charge"]) == ("CLOSED", "2030-01-01T13:00:00.000Z",
                                                                         "100.00")
    assert "unpaid" not in closed and closed["entered_at"] == AT
    assert store.open_ticket_of(lot, "A1") is None and store.open_tickets(lot) == []
    assert refused(store, *store.ticket_close(first, "2030-01-01T14:00:00.000Z", "200.00")) == "ticket, open"
    assert store.get_ticket(first["ticket_id"])["charge"] == "100.00"
    again = ticket(ids, "t2")
    commit(store, *store.ticket_open(again))
    # a close naming a ticket the marker does not name: refused whole, the ticket stays open
    stranger = {**ticket(ids, "t3"), "plate": "A1"}
    assert refused(store, *store.ticket_close(stranger, AT, "0.00")) == "ticket, open"
    owing = ticket(ids, "t4", plate="C3")
    commit(store, *store.ticket_open(owing))
    assert refused(store, *store.ticket_close({**owing, "plate": "A1"}, AT, "0.00")) == "open"
    assert store.get_ticket(owing["ticket_id"])["status"] == "OPEN"
    commit(store, *store.ticket_close(owing, AT, "300.00", "200.00"))
    assert store.get_ticket(owing["ticket_id"])["unpaid"] == "200.00"
    assert store.open_ticket_of(lot, "A1")["ticket_id"] == again["ticket_id"]


def test_a_tickets_outbox_event_is_written_once_and_expires(backend, ids):
    store, lot = backend.store, ids("lot")
    drive_up = ticket(ids)
    before = int(time.time())
    commit(store, store.ticket_outbox(drive_up, {"type": "vehicle.exited", "charge": {"value": "100.00",
                                                                                     "currency": "RUB"}}))
    after = int(time.time())
    item = backend.raw(f"TICKET#{drive_up['ticket_id']}", "OUTBOX#000001")
    assert before + DAYS_7 <= item.pop("ttl") <= after + DAYS_7
    assert item == {"pk": f"TICKET#{drive_up['ticket_id']}", "sk": "OUTBOX#000001",
                    "ticket_id": drive_up["ticket_id"], "event_id": lot, "customer_id": "drive-up",
                    "type": "vehicle.exited",
                    "charge": {"value": "100.00", "currency": "RUB"}}
    assert refused(store, store.ticket_outbox(drive_up, {"type": "again"})) == "outbox"


def test_a_tickets_status_is_checked_and_nothing_written(backend, ids):
    store = backend.store
    open_ = ticket(ids)
    commit(store, *store.ticket_open(open_))
    commit(store, store.ticket_status_is(open_["ticket_id"], "OPEN"))
    assert refused(store, store.ticket_status_is(open_["ticket_id"], "CLOSED")) == "ticket"
    assert refused(store, store.ticket_status_is(ids("nothing"), "OPEN")) == "ticket"
    assert store.get_ticket(ids("nothing")) is None


# ----------------------------------------------------------------------------------- passes

def test_a_pass_is_recorded_once_per_direction_and_only_an_online_answer_is_replaced(backend, ids):
    store, lot, gate = backend.store, ids("lot"), ids("gate")
    answer = {"gate_open": True, "ticket_id": "T1", "space_id": "R1", "reason": None, "amount": "1.50"}
    body = {"plate": "A1"}
    commit(store, store.pass_put(lot, gate, "ev1", answer, AT, body=body))      # "gate_open": an entry
    assert store.get_pass(lot, gate, "ev1", "entry") == {"answer": answer, "mode": "online", "body": body}
    raw = backend.raw(f"PASS#{lot}#{gate}#ev1", "entry")
    assert (raw["gate_id"], raw["at"], raw["mode"]) == (gate, AT, "online") and isinstance(raw["answer"], str)
    assert store.get_pass(lot, gate, "ev1", "exit") is None
    assert refused(store, store.pass_put(lot, gate, "ev1", {**answer, "ticket_id": "T2"}, AT)) == "pass"
    exit_ = {"exit_granted": False, "reason": "payment_required"}
    commit(store, store.pass_put(lot, gate, "ev1", exit_, AT))                    # the same id leaving
    assert store.get_pass(lot, gate, "ev1", "exit") == {"answer": exit_, "mode": "online", "body": None}
    # what the gate did offline replaces the online answer, once
    offline = {**exit_, "exit_granted": True}
    commit(store, store.pass_put(lot, gate, "ev1", offline, AT, "exit", offline=True, body=body,
                                 replacing_online=True))
    assert store.get_pass(lot, gate, "ev1", "exit") == {"answer": offline, "mode": "offline", "body": body}
    for event_id in ("ev1", "ev2"):                                  # offline already; never recorded
        replacing = store.pass_put(lot, gate, event_id, exit_, AT, "exit", replacing_online=True)
        assert refused(store, replacing) == "pass"
    assert store.get_pass(lot, gate, "ev2", "exit") is None
    assert store.get_pass(lot, ids("other-gate"), "ev1", "entry") is None


# ---------------------------------------------------------------------------- exit payments

def test_exit_payments_are_put_once_by_number_and_changed_from_the_state_read(backend, ids):
    store, tid = backend.store, ids("t")
    records = {n: {"number": n, "key": f"hf-exit-{tid}-{n}", "amount": "100.00", "currency": "RUB",
                   "state": "asked"} for n in (2, 10, 1)}
    for record in records.values():
        commit(store, store.exit_payment_put(tid, record))
    found = store.exit_payments(tid)
    assert [r["number"] for r in found] == [1, 2, 10] and found[0] == records[1]
    assert isinstance(found[0]["number"], Decimal)
    assert refused(store, store.exit_payment_put(tid, {**records[1], "amount": "1.00"})) == "exitpay:1"
    commit(store, store.exit_payment_change(tid, 1, {"state": "created", "payment_id": "p1"}, "asked"))
    assert refused(store, store.exit_payment_change(tid, 1, {"state": "paid"}, "asked")) == "exitpay:1"
    assert refused(store, store.exit_payment_change(tid, 5, {"state": "paid"}, "asked")) == "exitpay:5"
    assert [r["number"] for r in store.exit_payments(tid)] == [1, 2, 10]   # nothing made for 5
    first = store.exit_payments(tid)[0]
    assert (first["state"], first["payment_id"], first["amount"]) == ("created", "p1", "100.00")
    commit(store, store.exit_payment_not_paid(tid, 1))
    commit(store, store.exit_payment_change(tid, 1, {"state": "paid"}, "created"))
    assert refused(store, store.exit_payment_not_paid(tid, 1)) == "exitpay:1"
    commit(store, store.exit_payment_not_paid(tid, 7))               # ``<>`` holds where nothing is stored
    assert [r["number"] for r in store.exit_payments(tid)] == [1, 2, 10]


def test_a_ticket_close_counting_its_exit_payments_lands_whole_or_not_at_all(backend, ids):
    store, lot = backend.store, ids("lot")
    car = ticket(ids)
    commit(store, *store.ticket_open(car))
    asked = {"number": 1, "key": "k1", "amount": "100.00", "currency": "RUB", "state": "created"}
    commit(store, store.exit_payment_put(car["ticket_id"], asked))
    commit(store, store.exit_payment_change(car["ticket_id"], 1, {"state": "paid"}, "created"))
    # the exit read payment 1 as unpaid; it was paid meanwhile: nothing of the exit lands
    case = {"case_id": ids("case"), "opened_at": AT, "status": "OPEN", "lot_id": lot}
    assert refused(store, store.exit_payment_not_paid(car["ticket_id"], 1), store.gate_case_put(case),
                   *store.ticket_close(car, AT, "100.00")) == "exitpay:1"
    assert store.get_ticket(car["ticket_id"])["status"] == "OPEN" and store.get_gate_case(ids("case")) is None
    assert store.open_ticket_of(lot, "A1")["ticket_id"] == car["ticket_id"]


# ------------------------------------------------------------------------------- gate cases

def test_gate_cases_are_listed_while_open_oldest_first_and_resolved_once(backend, ids):
    amount = {"value": "100.00", "currency": "RUB"}

    def case_of(name, opened):
        return {"case_id": ids(name), "case_type": "payment", "lot_id": ids("lot"), "reason": "exit_overpaid",
                "status": "OPEN", "opened_at": opened, "amount": amount,
                "journal": [{"at": opened, "actor": "gate", "action": "gate_case_opened", "decision": "x"}]}

    check_cases(backend, ids, case_of=case_of, put="gate_case_put", get="get_gate_case", resolve="gate_case_resolve",
                listing="list_gate_cases", resolved_action="gate_case_resolved", key_pk="GATECASE#{case_id}")


# --------------------------------------------------------------------------------- granules

def space(ids, name: str, at: str) -> Granule:
    return Granule(resource_id=f"{ids('lot')}|{name}", at=at)


def claim(store, granule: Granule, booking_id: str, move: Move) -> tuple[str, dict]:
    return (f"claim:{granule.resource_id}:{granule.at}", store.granule_claim(granule, booking_id, move))


def test_a_lots_granules_are_one_partition_a_day_read_by_space_within_the_window(backend, ids):
    store, lot = backend.store, ids("lot")
    taken = [space(ids, "R1", "2030-01-02T22:30"), space(ids, "R1", "2030-01-02T23:30"),
             space(ids, "R2", "2030-01-03T00:00"), space(ids, "R1", "2030-01-03T00:30")]
    commit(store, *(claim(store, granule, "b1", Move.HOLD) for granule in taken))
    raw = backend.raw(f"PARK#{lot}#2030-01-03", "G#00:00#R2")
    assert (raw["session"], raw["taken"], raw["held"]) == ("B#b1", 1, 1)
    window = store.read_lot_granules(lot, "2030-01-02T23:00", "2030-01-03T00:30")
    assert sorted(window) == [("R1", "2030-01-02T23:30"), ("R2", "2030-01-03T00:00")]
    assert window[("R2", "2030-01-03T00:00")]["session"] == "B#b1"
    # a window ending at midnight reads no granule of the next day
    assert sorted(store.read_lot_granules(lot, "2030-01-02T22:30", "2030-01-03T00:00")) == [
        ("R1", "2030-01-02T22:30"), ("R1", "2030-01-02T23:30")]
    assert store.read_lot_granules(ids("other-lot"), "2030-01-02T00:00", "2030-01-04T00:00") == {}
    # another booking's claim on a taken granule: refused whole, the free one beside it untouched
    free = space(ids, "R2", "2030-01-02T23:30")
    assert refused(store, claim(store, free, "b2", Move.HOLD), claim(store, taken[1], "b2", Move.HOLD)) == \
        f"claim:{lot}|R1:2030-01-02T23:30"
    assert sorted(store.read_lot_granules(lot, "2030-01-02T23:30", "2030-01-03T00:00")) == [
        ("R1", "2030-01-02T23:30")]


def test_the_holders_of_sold_granules_are_the_bookings_and_tickets_not_held_ones_or_sessions(backend, ids):
    store, lot = backend.store, ids("lot")
    sold = [space(ids, "R1", "2030-01-02T10:00"), space(ids, "R1", "2030-01-02T10:30")]
    commit(store, *(claim(store, granule, "b-sold", Move.HOLD) for granule in sold))
    commit(store, *(claim(store, granule, "b-sold", Move.SELL) for granule in sold))
    commit(store, claim(store, space(ids, "R2", "2030-01-02T10:00"), "b-held", Move.HOLD))
    commit(store, claim(store, space(ids, "R3", "2030-01-02T11:00"), "t-drive", Move.RETAKE))   # a ticket's
    group = Granule(resource_id=f"{lot}|R4", at="2030-01-02T10:00", seats=1, session="S#svc#x", capacity=2)
    commit(store, claim(store, group, "b-group", Move.RETAKE))
    assert store.sold_holders(lot, "2030-01-02T09:00", "2030-01-02T12:00") == {"b-sold", "t-drive"}
    assert store.sold_holders(lot, "2030-01-02T10:30", "2030-01-02T11:00") == {"b-sold"}
    assert store.sold_holders(lot, "2030-01-02T09:00", "2030-01-02T10:00") == set()   # the end is out
    assert store.sold_holders(lot, "2030-01-02T11:30", "2030-01-03T00:00") == set()


def test_reservation_summaries_are_the_bookings_that_exist_four_attributes_each(backend, ids):
    store, event = backend.store, ids("lot")
    offering(store, event)
    details = {"space_id": "R1", "plate": "A1", "from": "2030-01-02T10:00:00.000Z",
               "to": "2030-01-02T12:00:00.000Z"}
    granule = Granule(resource_id=f"{event}|R1", at="2030-01-02T10:00")
    held = booking(ids("b"), event, Places("parking", 1, granules=(granule,)), kind_details=details)
    store.commit(new_hold(held))
    store.commit(step(held, BookingStatus.CONFIRMED, Move.SELL))
    assert store.reservation_summaries([ids("missing"), held.booking_id]) == [
        {"booking_id": held.booking_id, "event_id": event, "status": "CONFIRMED", "kind_details": details}]
    assert store.sold_holders(event, "2030-01-02T10:00", "2030-01-02T10:30") == {held.booking_id}
    assert store.reservation_summaries([]) == []
