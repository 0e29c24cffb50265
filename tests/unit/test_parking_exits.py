"""Parking's loose ends on the table's fake store (tests/support/fake_table.py): every exit payment
of a ticket counted (one paid late too, money beyond the charge to an operator), the provider's
notification of an exit payment recorded on its ticket, offline exits the backend refuses and
passes dated ahead of its clock opening gate cases, and an operator resolving a case."""
from __future__ import annotations

from datetime import timedelta

import pytest

from holdfast.domain.errors import Conflict, InvalidRequest, NotFound
from holdfast.products.parking.gate_sync_schemas import SyncPassIn
from holdfast.ports import Change
from holdfast.products.parking.services.gate_cases import GateCases, case_id, new_case
from holdfast.products.parking.services.gate_sync import GateSync
from tests.support.fakes import FakeGateSyncLedger
from tests.unit.test_parking import gates, make_lot, parking, store, view_bookings  # noqa: F401 - fixtures

ONE_SPACE = [{"space_id": "R1", "type": "REGULAR"}]


@pytest.fixture
def lot_gate(parking):
    lot = make_lot(parking, spaces=ONE_SPACE)
    return lot["lot_id"], parking.create_gate(lot["lot_id"], "Main")["gate_id"]


def pass_(gates, lot_gate, kind, event_id, at, offline=False, **body):
    return gates.apply(*lot_gate, {"kind": kind, "event_id": event_id, **body}, at=at, offline=offline)


def exit_payments(provider, ticket_id):
    return [p for p in provider.payments.values() if p["metadata"].get("ticket_id") == ticket_id]


def notify(payments, provider, payment_id):
    """The payment-events path: the payment as fetched from the provider, applied."""
    return payments.apply_provider_payment(provider.get_payment(payment_id))


def test_every_exit_payment_counts_and_money_beyond_the_charge_goes_to_an_operator(gates, lot_gate, clock, provider,
                                                                                    payments, store):
    start = clock()
    ticket = pass_(gates, lot_gate, "entry", "in", start, plate="A1")["ticket_id"]
    first = pass_(gates, lot_gate, "exit", "out-1", start + timedelta(minutes=65), plate="A1")
    assert first["amount_due"]["value"] == "100.00"                  # one started hour (10 grace minutes)
    later = start + timedelta(minutes=125)
    second = pass_(gates, lot_gate, "exit", "out-2", later, plate="A1")
    assert second["amount_due"]["value"] == "200.00"                 # more came due: a new payment
    older, newer = exit_payments(provider, ticket)
    provider.pay(older["id"])                                        # the customer pays the older one after all
    assert notify(payments, provider, older["id"]) == "exit_payment_paid"
    third = pass_(gates, lot_gate, "exit", "out-3", later, plate="A1")
    assert third["amount_due"]["value"] == "100.00"                  # it counted: 200 - 100
    provider.pay(newer["id"])                                        # and the 200 one too: 300 for 200 owed
    granted = pass_(gates, lot_gate, "exit", "out-4", later, plate="A1")
    assert granted["exit_granted"] is True and store.get_ticket(ticket)["status"] == "CLOSED"
    [case] = store.list_gate_cases(None, 100, None)[0]
    assert (case["case_type"], case["reason"], case["amount"]) == ("payment", "exit_overpaid",
                                                                   {"value": "100.00", "currency": "RUB"})
    assert sorted(case["payment_ids"]) == sorted([older["id"], newer["id"]])
    # the third payment (100, asked at out-3) paid after the car left: not lost either
    last = next(p for p in exit_payments(provider, ticket) if p["id"] not in (older["id"], newer["id"]))
    provider.pay(last["id"])
    assert notify(payments, provider, last["id"]) == "exit_payment_after_exit_review"
    assert notify(payments, provider, last["id"]) == "exit_payment_unchanged"      # a repeated notification
    cases = store.list_gate_cases(None, 100, None)[0]
    assert [(c["reason"], c["payment_id"]) for c in cases if c["reason"] == "paid_after_exit"] == \
        [("paid_after_exit", last["id"])]


def test_an_exit_payment_notification_is_recorded_on_its_ticket_so_the_exit_asks_nobody(gates, lot_gate, clock,
                                                                                       provider, payments, store):
    ticket = pass_(gates, lot_gate, "entry", "in", clock(), plate="B2")["ticket_id"]
    clock.now += timedelta(minutes=90)
    assert pass_(gates, lot_gate, "exit", "out-1", clock(), plate="B2")["exit_granted"] is False
    [payment] = exit_payments(provider, ticket)
    assert payment["metadata"]["exit_payment"] == "1"
    provider.pay(payment["id"])
    assert notify(payments, provider, payment["id"]) == "exit_payment_paid"       # not "unknown_booking"
    assert [r["state"] for r in store.exit_payments(ticket)] == ["paid"]
    asked = len(provider.calls)
    provider.fail("get_payment", "before")                          # the provider is away now: not needed
    assert pass_(gates, lot_gate, "exit", "out-2", clock(), plate="B2")["exit_granted"] is True
    assert ("get_payment", payment["id"]) not in provider.calls[asked:] and provider.faults["get_payment"]
    provider.faults.clear()
    forged = {**provider.get_payment(payment["id"]), "metadata": {"ticket_id": "nope", "lot_id": lot_gate[0]}}
    assert payments.apply_provider_payment(forged) == "unknown_ticket"


def test_an_offline_exit_the_backend_refuses_opens_a_case_and_frees_the_space(gates, lot_gate, clock, provider,
                                                                               parking, store):
    lot_id, gate_id = lot_gate
    ticket = pass_(gates, lot_gate, "entry", "in", clock(), plate="C3")["ticket_id"]
    clock.now += timedelta(minutes=150)
    gone = pass_(gates, lot_gate, "exit", "off-out", clock() - timedelta(minutes=30), offline=True, plate="C3")
    assert (gone["exit_granted"], gone["reason"], gone["amount_due"]["value"]) == (False, "payment_required", "200.00")
    assert gone["conflict"]["needs_review"] is True and gone["confirmation_url"] is None
    assert pass_(gates, lot_gate, "exit", "off-out", clock(), offline=True, plate="C3") == gone   # a repeat
    assert exit_payments(provider, ticket) == []                    # nobody is at the gate to pay
    closed = store.get_ticket(ticket)
    assert (closed["status"], closed["unpaid"]) == ("CLOSED", "200.00")
    assert parking.get_lot(lot_id)["occupied"] == 0                 # the car is gone: so is its space
    unknown = pass_(gates, lot_gate, "exit", "off-out-2", clock(), offline=True, plate="Z9")
    assert (unknown["reason"], unknown["conflict"]["reason"]) == ("ticket_not_found", "ticket_not_found")
    cases = {c["case_id"]: c for c in store.list_gate_cases(None, 100, None)[0]}
    assert sorted((c["case_type"], c["reason"], c.get("ticket_id") or "", c["plate"]) for c in cases.values()) == \
        [("exit", "payment_required", ticket, "C3"), ("exit", "ticket_not_found", "", "Z9")]
    assert cases[gone["conflict"]["case_id"]]["amount_due"] == {"value": "200.00", "currency": "RUB"}


def test_an_offline_exit_synced_after_the_car_came_back_never_closes_the_later_visit(gates, lot_gate, clock, parking,
                                                                                     store):
    """Proof seed 145 (G2): a gate offline saw the car leave; by the time that exit was synced the
    same plate had come in again online. The late exit was the earlier visit's: it is refused with a
    case, and the car now inside keeps its open ticket and its space."""
    lot_id, _ = lot_gate
    left_at = clock() - timedelta(minutes=20)
    inside = pass_(gates, lot_gate, "entry", "back-in", clock(), plate="D4")["ticket_id"]
    late = pass_(gates, lot_gate, "exit", "off-out", left_at, offline=True, plate="D4")
    assert (late["exit_granted"], late["reason"], late["conflict"]["reason"]) == \
        (False, "ticket_not_found", "ticket_not_found")
    assert store.get_ticket(inside)["status"] == "OPEN" and parking.get_lot(lot_id)["occupied"] == 1
    clock.now += timedelta(minutes=5)
    out = pass_(gates, lot_gate, "exit", "out", clock(), plate="D4")      # its own exit still finds it
    assert out["exit_granted"] is True and store.get_ticket(inside)["status"] == "CLOSED"


def test_a_pass_dated_ahead_of_the_server_clock_fails_for_good_and_opens_a_case(gates, lot_gate, clock, store):
    lot_id, gate_id = lot_gate
    sync = GateSync(FakeGateSyncLedger(store.table), gates.apply)

    def sent(seq, at, plate):
        return SyncPassIn(seq=seq, event_id=f"ev{seq}", kind="entry", at=at, plate=plate).as_event()

    ahead = clock() + timedelta(minutes=10)
    answer = sync.sync(lot_id, gate_id, [sent(1, ahead, "F1"), sent(2, clock() + timedelta(seconds=60), "F2")])
    assert answer["expected_seq"] == 3                               # the sequence moves on
    future, fine = answer["results"]
    assert (future["status"], future["result"]["error"]["code"]) == ("failed", "pass_time_in_future")
    assert future["result"]["error"]["details"]["max_skew_seconds"] == 120
    assert future["conflict"]["reason"] == "pass_time_in_future"    # the car did pass: an operator looks
    assert fine["status"] == "applied" and fine["result"]["gate_open"] is True   # inside the skew
    again = sync.sync(lot_id, gate_id, [sent(1, ahead, "F1")])
    assert again["results"][0]["status"] == "failed" and again["results"][0]["result"] == future["result"]
    assert [(c["case_type"], c["reason"], c["plate"]) for c in store.list_gate_cases(None, 100, None)[0]] == \
        [("entry", "pass_time_in_future", "F1")]


def test_an_operator_resolves_a_gate_case_once_and_journalled(gates, lot_gate, clock, store):
    pass_(gates, lot_gate, "entry", "in", clock(), plate="D1")
    refused = pass_(gates, lot_gate, "entry", "in-2", clock(), offline=True, plate="D2")   # lot_full
    identity = refused["conflict"]["case_id"]
    cases = GateCases(store, clock)
    with pytest.raises(InvalidRequest) as wrong:
        cases.resolve(identity, "waived", "ops", "not for an entry")
    assert wrong.value.code == "resolution_not_allowed" and "vehicle_left" in wrong.value.details["allowed"]
    clock.now += timedelta(minutes=5)
    done = cases.resolve(identity, "vehicle_left", "ops-anna", "asked to leave at 12:05")
    assert (done["status"], done["resolution"]["resolution"], done["resolution"]["operator"]) == \
        ("RESOLVED", "vehicle_left", "ops-anna")
    assert [e["action"] for e in done["journal"]] == ["gate_case_opened", "gate_case_resolved"]
    assert cases.open_cases() == []
    assert cases.resolve(identity, "vehicle_left", "ops-bob", "again") == done          # a repeat: as it is
    with pytest.raises(Conflict) as other:
        cases.resolve(identity, "dismissed", "ops-bob", "changed my mind")
    assert other.value.code == "case_already_resolved"
    with pytest.raises(NotFound) as missing:
        cases.resolve("0" * 36, "dismissed", "ops", "x")
    assert missing.value.code == "gate_case_not_found"


def test_money_paid_after_a_car_left_owing_opens_a_case_whose_amounts_are_value_and_currency(
        gates, lot_gate, clock, provider, payments, store):
    lot_id = lot_gate[0]
    start = clock()
    ticket = pass_(gates, lot_gate, "entry", "in", start, plate="U1")["ticket_id"]
    clock.now += timedelta(minutes=66)
    pass_(gates, lot_gate, "exit", "out-1", start + timedelta(minutes=65), plate="U1")         # asks 100
    pass_(gates, lot_gate, "exit", "off-out", clock(), offline=True, plate="U1")
    assert store.get_ticket(ticket)["unpaid"] == "100.00"          # the gate let it out owing that
    [payment] = exit_payments(provider, ticket)
    provider.pay(payment["id"])
    assert notify(payments, provider, payment["id"]) == "exit_payment_after_exit_review"
    cases = GateCases(store, clock)
    [case] = [c for c in cases.open_cases() if c["reason"] == "paid_after_exit"]
    hundred = {"value": "100.00", "currency": "RUB"}
    assert (case["amount"], case["unpaid"]) == (hundred, hundred)
    # a case opened before amounts were objects kept unpaid as bare text: shown in the one shape too
    older = new_case(case_id(lot_id, "payment", "older"), "payment", lot_id, "paid_after_exit", "2029-12-31T00:00:00Z",
                     "provider", ticket_id=ticket, amount=hundred, unpaid="100.00")
    store.commit(Change(items=(store.gate_case_put(older),)))
    shown = {c["case_id"]: c for c in cases.open_cases()}[older["case_id"]]
    assert shown["unpaid"] == hundred
    assert cases.resolve(older["case_id"], "applied_to_debt", "ops", "set against the debt")["unpaid"] == hundred


def test_an_exit_payment_paid_while_the_exit_closes_the_ticket_is_counted_not_lost(gates, lot_gate, clock, provider,
                                                                                    payments, store, monkeypatch):
    start = clock()
    ticket = pass_(gates, lot_gate, "entry", "in", start, plate="E5")["ticket_id"]
    pass_(gates, lot_gate, "exit", "out-1", start + timedelta(minutes=65), plate="E5")       # asks 100
    later = start + timedelta(minutes=125)
    pass_(gates, lot_gate, "exit", "out-2", later, plate="E5")                               # asks 200
    older, newer = exit_payments(provider, ticket)
    provider.pay(newer["id"])
    settled = gates.exit_payments.settled

    def read_then_race(ticket_item):
        records = settled(ticket_item)   # the exit has read the older one as unpaid...
        if not provider.payments[older["id"]]["paid"]:
            provider.pay(older["id"])        # ...when its notification is recorded, before the exit closes
            assert notify(payments, provider, older["id"]) == "exit_payment_paid"
        return records

    monkeypatch.setattr(gates.exit_payments, "settled", read_then_race)
    assert pass_(gates, lot_gate, "exit", "out-3", later, plate="E5")["exit_granted"] is True
    [case] = store.list_gate_cases(None, 100, None)[0]
    assert (case["reason"], case["amount"]["value"]) == ("exit_overpaid", "100.00")


def test_a_new_pass_on_a_closed_ticket_is_refused_and_counted_and_its_own_repeat_is_not(gates, lot_gate, clock,
                                                                                      store):
    from holdfast import observability

    ticket = pass_(gates, lot_gate, "entry", "in", clock(), plate="H1")["ticket_id"]
    clock.now += timedelta(minutes=5)                              # inside the grace minutes: free
    left = pass_(gates, lot_gate, "exit", "out", clock(), ticket_id=ticket)
    assert left["exit_granted"] is True and store.get_ticket(ticket)["status"] == "CLOSED"
    closed_at = store.get_ticket(ticket)["exited_at"]
    observability.discard()
    clock.now += timedelta(hours=3)                                # another car shows the old ticket
    reused = pass_(gates, lot_gate, "exit", "out-again", clock(), ticket_id=ticket)
    assert (reused["exit_granted"], reused["reason"], reused["amount_due"]) == (False, "ticket_closed", None)
    assert pass_(gates, lot_gate, "exit", "out-again", clock(), ticket_id=ticket) == reused   # a repeat
    assert pass_(gates, lot_gate, "exit", "out", clock(), ticket_id=ticket) == left            # the first pass's
    assert observability.pending() == {"ClosedTicketPasses": 1}
    # a car is stuck at the shut barrier (another car, or this ticket's own whose granted exit the
    # gate never heard): an operator sees it, once for the pass and its repeat
    [stuck] = store.list_gate_cases(None, 100, None)[0]
    assert (stuck["case_type"], stuck["reason"], stuck["ticket_id"], stuck["plate"], stuck["event_id"]) == \
        ("exit", "ticket_closed", ticket, "H1", "out-again")
    # an offline gate that let a car out on it: refused too, and the car's leaving goes to an operator
    gone = pass_(gates, lot_gate, "exit", "off-out", clock(), offline=True, ticket_id=ticket)
    assert (gone["exit_granted"], gone["reason"], gone["conflict"]["reason"]) == (False, "ticket_closed",
                                                                                  "ticket_closed")
    case = next(c for c in store.list_gate_cases(None, 100, None)[0] if c["event_id"] == "off-out")
    assert (case["case_type"], case["reason"], case["ticket_id"]) == ("exit", "ticket_closed", ticket)
    assert len(store.list_gate_cases(None, 100, None)[0]) == 2
    assert store.get_ticket(ticket)["exited_at"] == closed_at                  # closed once, not again


def test_gates_of_one_lot_each_have_their_own_pass_ids_and_a_reused_id_is_refused(parking, gates, clock, store):
    lot = make_lot(parking, spaces=[{"space_id": "R1", "type": "REGULAR"}, {"space_id": "R2", "type": "REGULAR"}])
    north = parking.create_gate(lot["lot_id"], "North")["gate_id"]
    south = parking.create_gate(lot["lot_id"], "South")["gate_id"]

    def entry(gate_id, plate, offline=False):
        return gates.apply(lot["lot_id"], gate_id, {"kind": "entry", "event_id": "17", "plate": plate}, at=clock(),
                           offline=offline)

    first, second = entry(north, "N1"), entry(south, "S1")         # both gates number their passes alike
    assert first["gate_open"] is True and second["gate_open"] is True
    assert first["ticket_id"] != second["ticket_id"] and first["space_id"] != second["space_id"]
    assert store.open_ticket_of(lot["lot_id"], "S1")["ticket_id"] == second["ticket_id"]
    assert entry(north, "n 1") == first                            # the same pass again (the plate as written)
    for offline in (False, True):
        with pytest.raises(Conflict) as reused:
            entry(north, "X9", offline)                            # the id again, another car
        assert (reused.value.status, reused.value.code) == (409, "pass_id_reused")
    assert store.open_ticket_of(lot["lot_id"], "X9") is None
    # the id again naming a car another way (a ticket, where the first named a plate): nothing says
    # it is the same car, so it is not answered with the first one's opening
    with pytest.raises(Conflict) as other_way:
        gates.apply(lot["lot_id"], north, {"kind": "entry", "event_id": "17", "token": "not-N1s"}, at=clock(),
                    offline=False)
    assert other_way.value.code == "pass_id_reused"
    sync = GateSync(FakeGateSyncLedger(store.table), gates.apply)
    answer = sync.sync(lot["lot_id"], north, [SyncPassIn(seq=1, event_id="17", kind="entry", at=clock(),
                                                               plate="Q1").as_event()])
    assert answer["results"][0]["status"] == "failed"
    assert answer["results"][0]["result"]["error"]["code"] == "pass_id_reused" and answer["expected_seq"] == 2


def test_an_offline_exit_the_backend_had_refused_online_is_applied_at_sync_and_nothing_stays_stuck(
        parking, gates, payments, provider, clock, store):
    # the gate asked online, the backend asked the provider for the overstay and answered
    # payment_required; the gate had timed out, let the car out offline and queued the same id
    from tests.unit.test_parking import confirm, reserve

    lot = make_lot(parking, spaces=ONE_SPACE)
    gate_id = parking.create_gate(lot["lot_id"], "Main")["gate_id"]
    booking = reserve(parking, lot, "REGULAR", "10:00", "11:00", plate="R7")
    confirm(payments, provider, booking)
    token = parking.bookings.view(booking.booking_id, "alice")["entry_token"]
    clock.now = clock.now.replace(day=2, hour=10, minute=0)
    entered = gates.apply(lot["lot_id"], gate_id, {"kind": "entry", "event_id": "in", "token": token}, at=clock(),
                          offline=False)
    clock.now = clock.now.replace(hour=12, minute=30)
    exit_ = {"kind": "exit", "event_id": "out", "ticket_id": entered["ticket_id"]}
    online = gates.apply(lot["lot_id"], gate_id, exit_, at=clock(), offline=False)
    assert (online["exit_granted"], online["reason"]) == (False, "payment_required")

    sync = GateSync(FakeGateSyncLedger(store.table), gates.apply)
    queued = SyncPassIn(seq=1, event_id="out", kind="exit", at=clock(), ticket_id=entered["ticket_id"],
                        plate="R7").as_event()
    [result] = sync.sync(lot["lot_id"], gate_id, [queued])["results"]
    assert result["status"] == "applied" and result["result"]["amount_due"]["value"] == "200.00"
    assert result["conflict"]["reason"] == "payment_required" and result["conflict"]["case_id"]
    ticket = store.get_ticket(entered["ticket_id"])
    assert (ticket["status"], ticket["unpaid"]) == ("CLOSED", "200.00")
    assert store.get_booking(booking.booking_id).status == "COMPLETED"
    [case] = store.list_gate_cases(None, 100, None)[0]
    assert (case["case_type"], case["reason"], case["case_id"]) == ("exit", "payment_required",
                                                                    result["conflict"]["case_id"])
    # a resent batch and the online route's own repeat both get the reconciled answer; nothing twice
    [again] = sync.sync(lot["lot_id"], gate_id, [queued])["results"]
    assert (again["status"], again["result"]) == ("duplicate", result["result"])
    assert gates.apply(lot["lot_id"], gate_id, exit_, at=clock(), offline=False) == result["result"]
    assert len(store.list_gate_cases(None, 100, None)[0]) == 1
    # the plate is free to come again
    back = gates.apply(lot["lot_id"], gate_id, {"kind": "entry", "event_id": "in-2", "plate": "R7"}, at=clock(),
                       offline=False)
    assert back["gate_open"] is True


def test_an_offline_entry_the_backend_had_refused_online_opens_a_case_at_sync(gates, lot_gate, clock, store):
    lot_id, gate_id = lot_gate
    pass_(gates, lot_gate, "entry", "first", clock(), plate="K1")                   # the one space is taken
    refused = pass_(gates, lot_gate, "entry", "second", clock(), plate="K2")
    assert (refused["gate_open"], refused["reason"]) == (False, "lot_full")
    # the gate had timed out and let K2 in offline (say, as a subscriber it had cached)
    sync = GateSync(FakeGateSyncLedger(store.table), gates.apply)
    [result] = sync.sync(lot_id, gate_id, [SyncPassIn(seq=1, event_id="second", kind="entry", at=clock(),
                                                      plate="K2").as_event()])["results"]
    assert result["status"] == "applied" and result["result"]["reason"] == "lot_full"
    [case] = store.list_gate_cases(None, 100, None)[0]
    assert (case["case_type"], case["reason"], case["plate"], case["case_id"]) == (
        "entry", "lot_full", "K2", result["conflict"]["case_id"])


def test_a_local_ticket_shown_online_at_another_gate_finds_its_synced_ticket(parking, gates, clock, store):
    lot = make_lot(parking, spaces=ONE_SPACE)
    north = parking.create_gate(lot["lot_id"], "North")["gate_id"]
    south = parking.create_gate(lot["lot_id"], "South")["gate_id"]
    # North let the car in offline on its own ticket and has synced it since
    entered = gates.apply(lot["lot_id"], north, {"kind": "entry", "event_id": "in", "plate": "L1",
                                                 "local_ticket_id": "L-0123456789abcdef"},
                          at=clock(), offline=True)
    clock.now += timedelta(minutes=5)                              # inside the grace minutes: free
    # South never saw that entry: it sends the printed ticket as it is
    out = gates.apply(lot["lot_id"], south, {"kind": "exit", "event_id": "out", "ticket_id": "L-0123456789abcdef"},
                      at=clock(), offline=False)
    assert out["exit_granted"] is True
    assert store.get_ticket(entered["ticket_id"])["status"] == "CLOSED"


def test_an_online_exit_no_car_inside_matches_leaves_a_case_for_the_car_at_the_barrier(gates, lot_gate, clock,
                                                                                      store):
    refused = pass_(gates, lot_gate, "exit", "out", clock(), plate="Z9")
    assert (refused["exit_granted"], refused["reason"]) == (False, "ticket_not_found")
    assert "conflict" not in refused
    assert pass_(gates, lot_gate, "exit", "out", clock(), plate="Z9") == refused        # a repeat: one case
    [case] = store.list_gate_cases(None, 100, None)[0]
    assert (case["case_type"], case["reason"], case["plate"], case["event_id"]) == ("exit", "ticket_not_found", "Z9",
                                                                                    "out")


def test_a_car_staying_past_the_default_stay_keeps_its_space(parking, gates, clock):
    from tests.unit.test_parking import reserve

    lot = make_lot(parking, spaces=ONE_SPACE, default_stay_minutes=120)
    lot_gate = (lot["lot_id"], parking.create_gate(lot["lot_id"], "Main")["gate_id"])
    clock.now = clock.now.replace(year=2030, month=1, day=2, hour=8, minute=0, second=0, microsecond=0)
    first = pass_(gates, lot_gate, "entry", "in-1", clock(), plate="O1")
    assert first["space_id"] == "R1"
    clock.now = clock.now.replace(hour=11)                          # past the lot's default stay (2 hours)
    second = pass_(gates, lot_gate, "entry", "in-2", clock(), plate="O2")
    assert (second["gate_open"], second["reason"]) == (False, "lot_full")
    with pytest.raises(Conflict) as sold:                           # nor is it sold from now on
        reserve(parking, lot, start="11:00", end="12:00", plate="O3")
    assert sold.value.code == "no_space_available"
    assert pass_(gates, lot_gate, "exit", "out-1", clock(), plate="O1")["reason"] == "payment_required"


def test_an_entry_the_backend_opened_while_the_gate_kept_shut_leaves_a_case_naming_the_ticket(gates, lot_gate, clock,
                                                                                             store):
    opened = pass_(gates, lot_gate, "entry", "in", clock(), plate="G1")        # the gate never heard it
    assert opened["gate_open"] is True
    # its sync: the barrier stayed shut on that pass (the driver went away)
    kept = pass_(gates, lot_gate, "entry", "in", clock(), offline=True, plate="G1", gate_opened=False)
    assert kept["conflict"]["reason"] == "gate_kept_shut"
    assert pass_(gates, lot_gate, "entry", "in", clock(), offline=True, plate="G1", gate_opened=False) == kept
    [case] = store.list_gate_cases(None, 100, None)[0]
    assert (case["case_type"], case["reason"], case["ticket_id"], case["plate"]) == \
        ("entry", "gate_kept_shut", opened["ticket_id"], "G1")
    # a pass the backend never heard: recorded as shut, nothing to settle
    never = pass_(gates, lot_gate, "entry", "in-2", clock(), offline=True, plate="G2", gate_opened=False)
    assert (never["gate_open"], never["reason"]) == (False, "gate_kept_shut")
    assert store.open_ticket_of(lot_gate[0], "G2") is None and len(store.list_gate_cases(None, 100, None)[0]) == 1


def test_an_exit_refused_online_with_a_case_then_let_out_offline_under_its_id_syncs_once(gates, lot_gate, clock,
                                                                                           store):
    refused = pass_(gates, lot_gate, "exit", "out", clock(), plate="U1")      # the gate timed out meanwhile
    assert refused["reason"] == "ticket_not_found"
    synced = pass_(gates, lot_gate, "exit", "out", clock(), offline=True, plate="U1")   # it opened offline
    assert (synced["reason"], synced["conflict"]["reason"]) == ("ticket_not_found", "ticket_not_found")
    [case] = store.list_gate_cases(None, 100, None)[0]
    assert case["case_id"] == synced["conflict"]["case_id"]


def test_a_drive_up_pays_its_exit_on_the_exit_page_the_gate_links_to_and_sees_the_receipt(gates, lot_gate, clock,
                                                                                         provider, parking):
    from urllib.parse import parse_qs, urlsplit

    from holdfast.clock import iso

    entered_at = clock()
    ticket = pass_(gates, lot_gate, "entry", "in", entered_at, plate="C 3")["ticket_id"]
    out_at = entered_at + timedelta(minutes=75)
    owed = pass_(gates, lot_gate, "exit", "out", out_at, plate="C3")
    # the gate shows our page, never the provider's: it names the ticket and the payment's own key
    link = urlsplit(owed["confirmation_url"])
    assert (link.scheme, link.netloc, link.path) == ("http", "127.0.0.1:3000", "/exit.html")
    query = {name: values[0] for name, values in parse_qs(link.query).items()}
    assert (query["lot"], query["ticket"]) == (lot_gate[0], ticket) and len(query["key"]) >= 24
    assert pass_(gates, lot_gate, "exit", "out-again", out_at, plate="C3")["confirmation_url"] == owed["confirmation_url"]
    [payment] = exit_payments(provider, ticket)
    lot = parking.lot(lot_gate[0])
    page = gates.exit_payments.page(lot, ticket, query["key"])
    assert page == {"lot": {"lot_id": lot_gate[0], "name": "Central"}, "ticket_id": ticket, "plate": "C3",
                    "space_id": "R1", "entered_at": iso(entered_at), "charged_until": iso(out_at), "exited_at": None,
                    "amount": {"value": "200.00", "currency": "RUB"}, "state": "pending", "superseded": False,
                    "confirmation_url": payment["confirmation"]["confirmation_url"],
                    "contact_required": False, "receipt": False}   # a lot without fiscal receipts
    other_key = query["key"][:-1] + ("y" if query["key"].endswith("x") else "x")
    for ticket_id, key in ((ticket, other_key), (ticket, ""), ("0" * 36, query["key"])):
        with pytest.raises(NotFound) as missing:
            gates.exit_payments.page(lot, ticket_id, key)
        assert missing.value.code == "exit_payment_not_found"
    other = make_lot(parking, spaces=ONE_SPACE)
    with pytest.raises(NotFound):
        gates.exit_payments.page(parking.lot(other["lot_id"]), ticket, query["key"])
    # back from the provider before its notification: the page asks it, and shows the receipt
    provider.pay(payment["id"])
    paid = gates.exit_payments.page(lot, ticket, query["key"])
    assert (paid["state"], paid["confirmation_url"], paid["amount"]["value"]) == ("paid", None, "200.00")
    clock.now = out_at + timedelta(minutes=3)
    assert pass_(gates, lot_gate, "exit", "out-paid", clock(), plate="C3")["exit_granted"] is True
    assert gates.exit_payments.page(lot, ticket, query["key"])["exited_at"] == iso(clock())
