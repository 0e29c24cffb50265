"""Parking items: the lot's granules, gates, tickets, gate passes and subscriptions.

  PARK#<lot>#<YYYY-MM-DD>   G#<HH:MM>#<space>   a space's time granule (granule_claims.py: a group's
                                                granule, resource id "<lot>|<space>"), sorted by time so a
                                                window of the whole lot is one range query a day
  LOT#<lot>                 GATE#<gate>         a gate: name, sha256 of its key, organizer;
                                                deleted_at once deleted (kept: its key then answers 401)
  LOT#<lot>                 SUB#<plate>#<id>    a subscription: plate, valid_from, valid_to
  LOT#<lot>                 OPEN#<plate>        the open ticket of a plate (one car inside per plate)
  TICKET#<ticket>           META                a ticket: space, plate, entry, booking or own claims
  TICKET#<ticket>           EXITPAY#<n:04d>     the ticket's n-th exit payment: key, amount, payment id, state
  TICKET#<ticket>           OUTBOX#<n>          vehicle.exited of a drive-up ticket (a booking's goes on its own outbox)
  GATECASE#<case>           META                a gate case for an operator (gsi1 "GATECASE" while OPEN), its journal
  PASS#<lot>#<gate>#<pass_id>   entry | exit    a gate pass applied, with the answer given, whether the gate
                                                was online, and a digest of how it named the car (a repeat
                                                gets the answer back; the same id at the other direction, or
                                                at another gate, is another pass)

The open-ticket items of a lot are its occupancy: one query. A pass record, the ticket change and
the places' move are always one transaction (written with the booking's change when there is one).
"""
from __future__ import annotations

from typing import Any, Iterable

from botocore.exceptions import ClientError

from holdfast.domain.inventory import Granule, Move
from holdfast.ports import Labelled
from holdfast.adapters.checkin_passes import pass_item, read_pass
from holdfast.adapters.checkin_cases_store import (case_get, case_opened_put, case_put, case_resolve, offering_owner,
                                                    open_cases)
from holdfast.adapters.codec import Table, _attrs, _code, _plain, put_new
from holdfast.adapters.granule_claims import granule_claim, group_day_partition
from holdfast.adapters.personal_data_store import link_put
from holdfast.adapters.sale_gate import gate_check
from holdfast.clock import epoch_seconds

OUTBOX_RETENTION_SECONDS = 7 * 86_400
_KEYS = ("pk", "sk", "gsi1pk", "gsi1sk")
#: The prefix of gate cases' keys and of their open list's gsi1 key.
CASES = "GATECASE"
#: The items that carry an ``organizer_id`` (kinds/products.py, ``owned_items``): gates and subscriptions.
ORGANIZER_OWNED = (("LOT#", "GATE#"), ("LOT#", "SUB#"))


class DynamoParkingStore(Table):
    def read_lot_granules(self, lot_id: str, start: str, end: str) -> dict[tuple[str, str], dict[str, Any]]:
        """Claimed granules of every space of a lot in [start, end) ("YYYY-MM-DDTHH:MM" keys), by
        (space, granule); consistent reads, one range query per UTC day."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for day in _days(start, end):
            low = f"G#{start[11:16]}" if day == start[:10] else "G#"
            high = f"G#{end[11:16]}" if day == end[:10] else "G#~"
            items = self._query_all({
                "TableName": self.table, "ConsistentRead": True,
                "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
                "ExpressionAttributeValues": _attrs({":pk": group_day_partition(lot_id, day),
                                                     ":low": low, ":high": high}),
            })
            for item in items:
                _, at, space = item["sk"].split("#", 2)
                key = f"{day}T{at}"
                if start <= key < end:
                    found[(space, key)] = item
        return found

    def sold_holders(self, lot_id: str, start: str, end: str) -> set[str]:
        """Who holds a sold granule of the lot in [start, end): the id of a confirmed (or checked
        in) reservation or of a ticket (their granules' session is ``B#<id>``). The same range queries as ``read_lot_granules``, eventually
        consistent (a gate's cache, not a decision) and only the three attributes needed."""
        sessions: set[str] = set()
        for day in _days(start, end):
            low = f"G#{start[11:16]}" if day == start[:10] else "G#"
            high = f"G#{end[11:16]}" if day == end[:10] else "G#~"
            items = self._query_all({
                "TableName": self.table, "ConsistentRead": False,
                "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
                "ProjectionExpression": "sk, #session, sold", "ExpressionAttributeNames": {"#session": "session"},
                "ExpressionAttributeValues": _attrs({":pk": group_day_partition(lot_id, day),
                                                     ":low": low, ":high": high}),
            })
            sessions |= {item["session"] for item in items
                         if int(item.get("sold", 0)) and f"{day}T{item['sk'][2:7]}" < end and item.get("session")}
        return {session.removeprefix("B#") for session in sessions if session.startswith("B#")}

    def reservation_summaries(self, booking_ids: list[str]) -> list[dict[str, Any]]:
        """``booking_id``, ``event_id``, ``status``, ``payment`` and ``kind_details`` of these bookings (those
        that exist), by key, 100 a request, eventually consistent (for a gate's cache)."""
        found: list[dict[str, Any]] = []
        for start in range(0, len(booking_ids), 100):
            pending: dict[str, Any] = {self.table: {
                "Keys": [_attrs({"pk": f"BOOKING#{booking_id}", "sk": "META"}) for booking_id in booking_ids[start:start + 100]],
                "ProjectionExpression": "booking_id, event_id, #status, payment, kind_details",
                "ExpressionAttributeNames": {"#status": "status"}}}
            while pending:
                answer = self.client.batch_get_item(RequestItems=pending)
                found += [_plain(item) for item in answer.get("Responses", {}).get(self.table, [])]
                pending = answer.get("UnprocessedKeys") or {}
        return found

    # ------------------------------------------------------------------------------- gates
    def put_gate(self, lot_id: str, gate: dict[str, Any]) -> None:
        self.client.put_item(**put_new(self.table, {"pk": f"LOT#{lot_id}", "sk": f"GATE#{gate['gate_id']}", **gate})["Put"])

    def get_gate(self, lot_id: str, gate_id: str) -> dict[str, Any] | None:
        return self._get(f"LOT#{lot_id}", f"GATE#{gate_id}")

    def list_gates(self, lot_id: str) -> list[dict[str, Any]]:
        return self._query_prefix(f"LOT#{lot_id}", "GATE#")

    def change_gate(self, lot_id: str, gate_id: str, changes: dict[str, Any]) -> bool:
        """Set ``changes`` on a gate that exists and is not deleted; False otherwise (nothing written)."""
        names = {f"#f{i}": key for i, key in enumerate(changes)}
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs({"pk": f"LOT#{lot_id}", "sk": f"GATE#{gate_id}"}),
                UpdateExpression="SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(changes))),
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(deleted_at)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=_attrs({f":v{i}": value for i, value in enumerate(changes.values())}))
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # ----------------------------------------------------------------------- subscriptions
    def put_subscription(self, lot_id: str, subscription: dict[str, Any]) -> None:
        sk = f"SUB#{subscription['plate']}#{subscription['subscription_id']}"
        self.client.put_item(TableName=self.table, Item=_attrs({"pk": f"LOT#{lot_id}", "sk": sk, **subscription}))

    def subscriptions(self, lot_id: str, plate: str | None = None) -> list[dict[str, Any]]:
        return self._query_prefix(f"LOT#{lot_id}", f"SUB#{plate}#" if plate else "SUB#")

    # ----------------------------------------------------------------------------- tickets
    def get_ticket(self, ticket_id: str) -> dict[str, Any] | None:
        return self._get(f"TICKET#{ticket_id}", "META")

    def open_ticket_of(self, lot_id: str, plate: str) -> dict[str, Any] | None:
        item = self._get(f"LOT#{lot_id}", f"OPEN#{plate}")
        return self.get_ticket(item["ticket_id"]) if item else None

    def open_tickets(self, lot_id: str) -> list[dict[str, Any]]:
        return self._query_prefix(f"LOT#{lot_id}", "OPEN#")

    def get_pass(self, lot_id: str, gate_id: str, pass_id: str, direction: str) -> dict[str, Any] | None:
        """``{"answer", "mode", "body"}`` of a recorded pass, or None."""
        return read_pass(self, _pass_pk(lot_id, gate_id, pass_id), direction)

    def pass_put(self, lot_id: str, gate_id: str, pass_id: str, answer: dict[str, Any], at: str,
                 direction: str | None = None, *, offline: bool = False, body: dict[str, str] | None = None,
                 replacing_online: bool = False) -> Labelled:
        """The pass record, new; or, with ``replacing_online``, in place of the answer given online
        (conditioned on that one still being there: one sync replaces it, a second reads the new one)."""
        direction = direction or ("entry" if "gate_open" in answer else "exit")
        item = pass_item(_pass_pk(lot_id, gate_id, pass_id), direction, "gate_id", gate_id, answer, at,
                         offline=offline, body=body)
        if not replacing_online:
            return ("pass", put_new(self.table, item))
        return ("pass", {"Put": {"TableName": self.table, "Item": _attrs(item), "ConditionExpression": "#mode = :online",
                                 "ExpressionAttributeNames": {"#mode": "mode"},
                                 "ExpressionAttributeValues": _attrs({":online": "online"})}})

    def gate_case_put(self, case: dict[str, Any]) -> Labelled:
        """A case for an operator (a pass an offline gate let through that the backend cannot place,
        money that came in beyond what a ticket owed): the core's check-in case under ``GATECASE``."""
        return case_put(self, CASES, case, offering_owner(self, case["lot_id"]))

    def gate_case_items(self, case: dict[str, Any], booking_id: str | None = None) -> list[Labelled]:
        """The case, and where it copies a reservation's plate (it names the booking, or the
        ticket's ``booking_id`` is given) the booking's link to it, so that the booking's erasure
        finds it (adapters/personal_data_store.py)."""
        # the case's outbox item too: the organizer's webhooks hear of it (case.opened)
        items = [self.gate_case_put(case), case_opened_put(self, CASES, case, "lot_id", ("lot_id", "gate_id"))]
        booking_id = case.get("booking_id") or booking_id
        if booking_id:
            items.append(link_put(self.table, str(booking_id), f"{CASES}#{case['case_id']}", "META"))
        return items

    def get_gate_case(self, case_id: str) -> dict[str, Any] | None:
        return case_get(self, CASES, case_id)

    def gate_case_resolve(self, case_id: str, resolution: dict[str, Any], entry: dict[str, Any]) -> bool:
        return case_resolve(self, CASES, case_id, resolution, entry)

    def list_gate_cases(self, organizer_id: str | None, limit: int, cursor: str | None
                        ) -> tuple[list[dict[str, Any]], str | None]:
        return open_cases(self, CASES, organizer_id, limit, cursor)

    def ticket_open(self, ticket: dict[str, Any]) -> list[Labelled]:
        """The ticket and its plate's open marker, both new (a plate already inside fails ``open``);
        a reservation's ticket copies its plate and customer: the booking's link to it too."""
        pk = f"TICKET#{ticket['ticket_id']}"
        link = [link_put(self.table, str(ticket["booking_id"]), pk, "META")] if ticket.get("booking_id") else []
        return [("ticket", put_new(self.table, {"pk": pk, "sk": "META", **ticket})),
                ("open", put_new(self.table, {"pk": f"LOT#{ticket['lot_id']}", "sk": f"OPEN#{ticket['plate']}",
                                              "ticket_id": ticket["ticket_id"], "space_id": ticket["space_id"],
                                              "space_type": ticket["space_type"]})), *link]

    def ticket_close(self, ticket: dict[str, Any], exited_at: str, charge: str, unpaid: str | None = None) -> list[Labelled]:
        """Close an open ticket and drop its plate's marker: conditioned on it being open, so two exits
        racing close it (and release its space) once. ``unpaid``: what the car left owing (an offline exit)."""
        values = {":closed": "CLOSED", ":open": "OPEN", ":at": exited_at, ":charge": charge}
        if unpaid is not None:
            values[":unpaid"] = unpaid
        items: list[Labelled] = [
            ("ticket", {"Update": {
                "TableName": self.table, "Key": _attrs({"pk": f"TICKET#{ticket['ticket_id']}", "sk": "META"}),
                "UpdateExpression": "SET #status = :closed, exited_at = :at, charge = :charge"
                                    + (", unpaid = :unpaid" if unpaid is not None else ""),
                "ConditionExpression": "#status = :open", "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": _attrs(values)}}),
        ]
        open_sk = self._open_sk(ticket)
        if open_sk is not None:
            items.append(("open", {"Delete": {
                "TableName": self.table, "Key": _attrs({"pk": f"LOT#{ticket['lot_id']}", "sk": open_sk}),
                "ConditionExpression": "ticket_id = :ticket",
                "ExpressionAttributeValues": _attrs({":ticket": ticket["ticket_id"]})}}))
        return items

    def _open_sk(self, ticket: dict[str, Any]) -> str | None:
        """The sort key of the ticket's OPEN item: by its plate, or, for a ticket whose plate was
        erased (written before erasure waited for the car to leave), found by its id."""
        if ticket.get("plate"):
            return f"OPEN#{ticket['plate']}"
        found = [item["sk"] for item in self.open_tickets(ticket["lot_id"]) if item.get("ticket_id") == ticket["ticket_id"]]
        return found[0] if found else None

    def ticket_outbox(self, ticket: dict[str, Any], event: dict[str, Any]) -> Labelled:
        return ("outbox", put_new(self.table, {
            "pk": f"TICKET#{ticket['ticket_id']}", "sk": "OUTBOX#000001", "ticket_id": ticket["ticket_id"],
            "event_id": ticket["lot_id"], "customer_id": ticket.get("customer_id") or "drive-up",
            "ttl": int(epoch_seconds()) + OUTBOX_RETENTION_SECONDS, **event}))

    # ----------------------------------------------------------------------- exit payments
    def exit_payments(self, ticket_id: str) -> list[dict[str, Any]]:
        """Every exit payment of a ticket, by number."""
        items = self._query_prefix(f"TICKET#{ticket_id}", "EXITPAY#")
        return sorted(({k: v for k, v in item.items() if k not in _KEYS} for item in items),
                      key=lambda record: int(record["number"]))

    def exit_payment_put(self, ticket_id: str, record: dict[str, Any]) -> Labelled:
        """A new exit payment, stored with its key before the provider is called (each number once)."""
        return (f"exitpay:{record['number']}", put_new(self.table, {"pk": f"TICKET#{ticket_id}",
                                                                    "sk": _pay_sk(record["number"]), **record}))

    def exit_payment_change(self, ticket_id: str, number: int, changes: dict[str, Any], state: str) -> Labelled:
        """Change an exit payment, if it is still in ``state``."""
        names = {"#state": "state", **{f"#f{n}": key for n, key in enumerate(changes)}}
        values = {":was": state, **{f":v{n}": value for n, value in enumerate(changes.values())}}
        return (f"exitpay:{number}", {"Update": {
            "TableName": self.table, "Key": _attrs({"pk": f"TICKET#{ticket_id}", "sk": _pay_sk(number)}),
            "UpdateExpression": "SET " + ", ".join(f"#f{n} = :v{n}" for n in range(len(changes))),
            "ConditionExpression": "#state = :was", "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": _attrs(values)}})

    def exit_payment_not_paid(self, ticket_id: str, number: int) -> Labelled:
        """That an exit payment the exit did not count is still not paid (a notification that marked
        it paid meanwhile makes the exit count it again)."""
        return (f"exitpay:{number}", {"ConditionCheck": {
            "TableName": self.table, "Key": _attrs({"pk": f"TICKET#{ticket_id}", "sk": _pay_sk(number)}),
            "ConditionExpression": "#state <> :paid", "ExpressionAttributeNames": {"#state": "state"},
            "ExpressionAttributeValues": _attrs({":paid": "paid"})}})

    def ticket_status_is(self, ticket_id: str, status: str) -> Labelled:
        return ("ticket", {"ConditionCheck": {
            "TableName": self.table, "Key": _attrs({"pk": f"TICKET#{ticket_id}", "sk": "META"}),
            "ConditionExpression": "#status = :status", "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": _attrs({":status": status})}})

    def granule_claim(self, granule: Granule, booking_id: str, move: Move) -> dict[str, Any]:
        """A space's time granule changed by ``move``, for a ``Change``'s items (the caller labels it)."""
        return granule_claim(self.table, granule, booking_id, move)

    def sale_gate_check(self, event_id: str, booking_id: str) -> Labelled:
        """The lot (an offering) is not cancelled, checked in the same transaction."""
        return gate_check(self.table, event_id, booking_id)

    #: the calls the table's store answers through this part (adapters/dynamo.py binds each)
    STORE_CALLS = (read_lot_granules, sold_holders, reservation_summaries, put_gate, get_gate, list_gates,
                   change_gate, put_subscription, subscriptions, get_ticket, open_ticket_of, open_tickets,
                   get_pass, pass_put, gate_case_put, gate_case_items, get_gate_case, gate_case_resolve,
                   list_gate_cases, ticket_open, ticket_close, ticket_outbox, exit_payments,
                   exit_payment_put, exit_payment_change, exit_payment_not_paid, ticket_status_is,
                   granule_claim, sale_gate_check)


def _pass_pk(lot_id: str, gate_id: str, pass_id: str) -> str:
    return f"PASS#{lot_id}#{gate_id}#{pass_id}"


def _pay_sk(number: int) -> str:
    return f"EXITPAY#{int(number):04d}"


def _days(start: str, end: str) -> Iterable[str]:
    from datetime import date, timedelta

    day, last = date.fromisoformat(start[:10]), date.fromisoformat(end[:10])
    if end[11:16] == "00:00" and last > day:
        last -= timedelta(days=1)
    while day <= last:
        yield day.isoformat()
        day += timedelta(days=1)
