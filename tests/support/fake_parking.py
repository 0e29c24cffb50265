"""An in-memory parking store part: what products/parking/adapters/store.py's ``DynamoParkingStore`` keeps
beside the core's items (a lot's granules read whole, gates, subscriptions, tickets, gate passes,
exit payments, gate cases), over the ``MemoryTable`` of the fake booking store it is composed into
(tests/support/fake_table.py), as the adapter part shares the table and client of ``BookingStore``.

As in tests/support/fake_store.py, the *items* are the adapter's: their keys come from its key
functions (``granule_key``, ``_pass_pk``, ``_pay_sk``, ``_days``) and their attributes are the
ones it writes, so a test that looks at a stored ticket or pass sees what DynamoDB would hold. The
*semantics* are the fake's own: each item a service hands to ``commit`` is a ``Write`` (key,
condition, effect) that the fake booking store checks with every other item of the change before
it writes any, and a failed one is named by its label as the adapter names it (``StaleBooking``).
tests/contract/storage/test_parking_items.py runs the same cases on this fake, the adapter on moto
and the adapter on DynamoDB Local.

Test code only: the deployed package (layers/) never imports this module.
"""
from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from holdfast.adapters.granule_claims import granule_key
from holdfast.domain.inventory import Granule, Move
from holdfast.ports import Labelled
from holdfast.products.parking.adapters.store import OUTBOX_RETENTION_SECONDS, _days, _pass_pk, _pay_sk
from tests.support import fake_checkins as checkins
from tests.support.fake_store import FakeBookingStore, _granule, fake_item, validation_error
from tests.support.fakes import Item, Write, _Fake, _has, _set, absent, always

#: The attributes of keys and of the gsi1 index, which the adapter drops from what it hands back.
_KEYS = ("pk", "sk", "gsi1pk", "gsi1sk")
#: What ``reservation_summaries`` projects of a booking.
SUMMARY = ("booking_id", "event_id", "status", "payment", "kind_details")


def _lot_day(lot_id: str, day: str) -> str:
    """The partition of a lot's granules on one UTC day (every space of the lot shares it)."""
    return granule_key(f"{lot_id}|", f"{day}T00:00")["pk"]


def _without_keys(item: Item) -> Item:
    return {name: value for name, value in item.items() if name not in _KEYS}


def _put_new(label: str, item: Item) -> Labelled:
    """``put_new``: the whole item, on condition that nothing is stored under its key."""
    return fake_item(Write(label, (item["pk"], item["sk"]), absent, lambda _: dict(item)))


def _link(booking_id: str, pk: str) -> Labelled:
    """The booking's link to an item that copied its personal fields (personal_data_store.link_put)."""
    item = {"pk": f"BOOKING#{booking_id}", "sk": f"LINK#{pk}|META", "linked_pk": pk, "linked_sk": "META"}
    return fake_item(Write("personal_link", (item["pk"], item["sk"]), always, lambda _: dict(item)))


def _check(label: str, key: tuple[str, str], condition) -> Labelled:  # noqa: ANN001
    """A ``ConditionCheck``: the condition, no effect."""
    return fake_item(Write(label, key, condition, lambda item: item))


class FakeParkingItems(_Fake):
    """The members of parking's ports (products/parking/ports.py) that the adapter's store part
    answers: ``ParkingLots``, ``GateCaseItems``, the ticket, pass and exit payment items of
    ``TicketWrites``, ``ExitPaymentStore`` and ``GatePassStore``, and ``granule_claim``."""

    # ------------------------------------------------------------------------- granules
    def _lot_granules(self, lot_id: str, start: str, end: str) -> list[tuple[str, Item]]:
        """The adapter's range queries: per UTC day, ``sk BETWEEN low AND high`` (both ends in)."""
        found = []
        for day in _days(start, end):
            low = f"G#{start[11:16]}" if day == start[:10] else "G#"
            high = f"G#{end[11:16]}" if day == end[:10] else "G#~"
            found += [(day, item) for item in self.table.query(_lot_day(lot_id, day), low=low, high=high)]
        return found

    def read_lot_granules(self, lot_id: str, start: str, end: str) -> dict[tuple[str, str], dict[str, Any]]:
        self.table.check_fault("read_lot_granules")
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for day, item in self._lot_granules(lot_id, start, end):
            _, at, space = item["sk"].split("#", 2)
            key = f"{day}T{at}"
            if start <= key < end:
                found[(space, key)] = item
        return found

    def sold_holders(self, lot_id: str, start: str, end: str) -> set[str]:
        self.table.check_fault("sold_holders")
        sessions = {item["session"] for day, item in self._lot_granules(lot_id, start, end)
                    if int(item.get("sold", 0)) and f"{day}T{item['sk'][2:7]}" < end and item.get("session")}
        return {session.removeprefix("B#") for session in sessions if session.startswith("B#")}

    def reservation_summaries(self, booking_ids: list[str]) -> list[dict[str, Any]]:
        self.table.check_fault("reservation_summaries")
        found = []
        for start in range(0, len(booking_ids), 100):
            chunk = booking_ids[start:start + 100]
            if len(set(chunk)) != len(chunk):
                raise validation_error("Provided list of item keys contains duplicates", "BatchGetItem")
            for booking_id in chunk:
                item = self.table.get(f"BOOKING#{booking_id}", "META")
                if item is not None:
                    found.append({name: item[name] for name in SUMMARY if name in item})
        return found

    def granule_claim(self, granule: Granule, booking_id: str, move: Move) -> dict[str, Any]:
        return {"Fake": _granule(granule, booking_id, move)}

    def sale_gate_check(self, event_id: str, booking_id: str) -> Labelled:
        return fake_item(FakeBookingStore._gate(event_id, booking_id))

    # ----------------------------------------------------------------------------- gates
    def put_gate(self, lot_id: str, gate: dict[str, Any]) -> None:
        self.table.check_fault("put_gate")
        if not self.table.write((f"LOT#{lot_id}", f"GATE#{gate['gate_id']}"), absent, lambda _: dict(gate)):
            # the adapter's PutItem is conditional and lets DynamoDB's refusal through
            raise ClientError({"Error": {"Code": "ConditionalCheckFailedException",
                                         "Message": "The conditional request failed"}}, "PutItem")

    def get_gate(self, lot_id: str, gate_id: str) -> dict[str, Any] | None:
        self.table.check_fault("get_gate")
        return self.table.get(f"LOT#{lot_id}", f"GATE#{gate_id}")

    def list_gates(self, lot_id: str) -> list[dict[str, Any]]:
        self.table.check_fault("list_gates")
        return self.table.query(f"LOT#{lot_id}", prefix="GATE#")

    def change_gate(self, lot_id: str, gate_id: str, changes: dict[str, Any]) -> bool:
        self.table.check_fault("change_gate")
        return self.table.write((f"LOT#{lot_id}", f"GATE#{gate_id}"),
                                lambda item: item is not None and "deleted_at" not in item, _set(changes))

    # --------------------------------------------------------------------- subscriptions
    def put_subscription(self, lot_id: str, subscription: dict[str, Any]) -> None:
        self.table.check_fault("put_subscription")
        sk = f"SUB#{subscription['plate']}#{subscription['subscription_id']}"
        self.table.write((f"LOT#{lot_id}", sk), always, lambda _: dict(subscription))

    def subscriptions(self, lot_id: str, plate: str | None = None) -> list[dict[str, Any]]:
        self.table.check_fault("subscriptions")
        return self.table.query(f"LOT#{lot_id}", prefix=f"SUB#{plate}#" if plate else "SUB#")

    # --------------------------------------------------------------------------- tickets
    def get_ticket(self, ticket_id: str) -> dict[str, Any] | None:
        self.table.check_fault("get_ticket")
        return self.table.get(f"TICKET#{ticket_id}", "META")

    def open_ticket_of(self, lot_id: str, plate: str) -> dict[str, Any] | None:
        self.table.check_fault("open_ticket_of")
        marker = self.table.get(f"LOT#{lot_id}", f"OPEN#{plate}")
        return self.table.get(f"TICKET#{marker['ticket_id']}", "META") if marker else None

    def open_tickets(self, lot_id: str) -> list[dict[str, Any]]:
        self.table.check_fault("open_tickets")
        return self.table.query(f"LOT#{lot_id}", prefix="OPEN#")

    def ticket_open(self, ticket: dict[str, Any]) -> list[Labelled]:
        link = [_link(str(ticket["booking_id"]), f"TICKET#{ticket['ticket_id']}")] if ticket.get("booking_id") else []
        return [*link, _put_new("ticket", {"pk": f"TICKET#{ticket['ticket_id']}", "sk": "META", **ticket}),
                _put_new("open", {"pk": f"LOT#{ticket['lot_id']}", "sk": f"OPEN#{ticket['plate']}",
                                  "ticket_id": ticket["ticket_id"], "space_id": ticket["space_id"],
                                  "space_type": ticket["space_type"]})]

    def ticket_close(self, ticket: dict[str, Any], exited_at: str, charge: str, unpaid: str | None = None
                     ) -> list[Labelled]:
        changes = {"status": "CLOSED", "exited_at": exited_at, "charge": charge,
                   **({"unpaid": unpaid} if unpaid is not None else {})}
        return [
            fake_item(Write("ticket", (f"TICKET#{ticket['ticket_id']}", "META"), _has("status", "OPEN"),
                            _set(changes))),
            fake_item(Write("open", (f"LOT#{ticket['lot_id']}", f"OPEN#{ticket['plate']}"),
                            _has("ticket_id", ticket["ticket_id"]), lambda _: None)),
        ]

    def ticket_outbox(self, ticket: dict[str, Any], event: dict[str, Any]) -> Labelled:
        return _put_new("outbox", {
            "pk": f"TICKET#{ticket['ticket_id']}", "sk": "OUTBOX#000001", "ticket_id": ticket["ticket_id"],
            "event_id": ticket["lot_id"], "customer_id": ticket.get("customer_id") or "drive-up",
            "ttl": int(time.time()) + OUTBOX_RETENTION_SECONDS, **event})

    def ticket_status_is(self, ticket_id: str, status: str) -> Labelled:
        return _check("ticket", (f"TICKET#{ticket_id}", "META"), _has("status", status))

    # ----------------------------------------------------------------------- gate passes
    def get_pass(self, lot_id: str, gate_id: str, pass_id: str, direction: str) -> dict[str, Any] | None:
        self.table.check_fault("get_pass")
        return checkins.read_pass(self.table, _pass_pk(lot_id, gate_id, pass_id), direction)

    def pass_put(self, lot_id: str, gate_id: str, pass_id: str, answer: dict[str, Any], at: str,
                 direction: str | None = None, *, offline: bool = False, body: dict[str, str] | None = None,
                 replacing_online: bool = False) -> Labelled:
        direction = direction or ("entry" if "gate_open" in answer else "exit")
        item = checkins.pass_item(_pass_pk(lot_id, gate_id, pass_id), direction, "gate_id", gate_id, answer, at,
                                  offline=offline, body=body)
        if not replacing_online:
            return _put_new("pass", item)
        return fake_item(Write("pass", (item["pk"], item["sk"]), _has("mode", "online"),
                               lambda _: dict(item)))

    # --------------------------------------------------------------------- exit payments
    def exit_payments(self, ticket_id: str) -> list[dict[str, Any]]:
        self.table.check_fault("exit_payments")
        items = self.table.query(f"TICKET#{ticket_id}", prefix="EXITPAY#")
        return sorted((_without_keys(item) for item in items), key=lambda record: int(record["number"]))

    def exit_payment_put(self, ticket_id: str, record: dict[str, Any]) -> Labelled:
        return _put_new(f"exitpay:{record['number']}",
                        {"pk": f"TICKET#{ticket_id}", "sk": _pay_sk(record["number"]), **record})

    def exit_payment_change(self, ticket_id: str, number: int, changes: dict[str, Any], state: str
                            ) -> Labelled:
        return fake_item(Write(f"exitpay:{number}", (f"TICKET#{ticket_id}", _pay_sk(number)),
                               _has("state", state), _set(changes)))

    def exit_payment_not_paid(self, ticket_id: str, number: int) -> Labelled:
        # ``#state <> :paid`` holds on a missing item too (DynamoDB Local and moto agree:
        # tests/contract/storage/test_parking_items.py), unlike ``=``, which needs the attribute
        return _check(f"exitpay:{number}", (f"TICKET#{ticket_id}", _pay_sk(number)),
                      lambda item: item is None or item.get("state") != "paid")

    # ------------------------------------------------------------------------ gate cases
    def gate_case_put(self, case: dict[str, Any]) -> Labelled:
        return checkins.case_put("GATECASE", case, checkins.offering_owner(self.table, case["lot_id"]))

    def gate_case_items(self, case: dict[str, Any], booking_id: str | None = None) -> list[Labelled]:
        booking_id = case.get("booking_id") or booking_id
        return [self.gate_case_put(case)] + ([_link(str(booking_id), f"GATECASE#{case['case_id']}")] if booking_id else [])

    def get_gate_case(self, case_id: str) -> dict[str, Any] | None:
        self.table.check_fault("get_gate_case")
        return checkins.case_get(self.table, "GATECASE", case_id)

    def gate_case_resolve(self, case_id: str, resolution: dict[str, Any], entry: dict[str, Any]) -> bool:
        self.table.check_fault("gate_case_resolve")
        return checkins.case_resolve(self.table, "GATECASE", case_id, resolution, entry)

    def list_gate_cases(self, organizer_id: str | None, limit: int, cursor: str | None
                        ) -> tuple[list[dict[str, Any]], str | None]:
        self.table.check_fault("list_gate_cases")
        return checkins.open_cases(self.table, "GATECASE", organizer_id, limit, cursor)
