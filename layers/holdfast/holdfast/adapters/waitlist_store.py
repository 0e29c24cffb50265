"""Waitlist storage: one partition per event's line.

  WAITLIST#<event> / Q#<joined_at>#<entry>   a customer waiting, in order of joining
  WAITLIST#<event> / CUST#<customer>         the customer's entry and its state (one per customer)
  WAITLIST#<event> / OFFER#<entry>           an entry taken off the queue: PENDING until its hold
                                             exists, then OFFERED with the booking id
"""
from __future__ import annotations

from typing import Any

from .codec import Table, _attrs, _plain


class DynamoWaitlistStore:
    """The events' waitlists, on the shared table handle."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def waitlist_entry(self, event_id: str, customer_id: str) -> dict[str, Any] | None:
        return self.db._get(f"WAITLIST#{event_id}", f"CUST#{customer_id}")

    @staticmethod
    def waitlist_queue_key(joined_at: str, entry_id: str) -> str:
        """An entry's place in the line: its sort key, in order of joining."""
        return f"Q#{joined_at}#{entry_id}"

    def waitlist_join(self, event_id: str, entry: dict[str, Any], rejoin_states: tuple[str, ...]) -> bool:
        """Put the customer's entry and its queue item; False when the customer is already on the
        list (in a state other than ``rejoin_states``)."""
        pk = f"WAITLIST#{event_id}"
        names = {"#state": "state"}
        values = {f":s{i}": state for i, state in enumerate(rejoin_states)}
        allowed = " OR ".join(f"#state = :s{i}" for i in range(len(rejoin_states)))
        condition = "attribute_not_exists(pk)" + (f" OR {allowed}" if allowed else "")
        marker = {"Put": {"TableName": self.db.table, "ConditionExpression": condition,
                          "Item": _attrs({"pk": pk, "sk": f"CUST#{entry['customer_id']}", **entry})}}
        if values:
            marker["Put"]["ExpressionAttributeNames"] = names
            marker["Put"]["ExpressionAttributeValues"] = _attrs(values)
        queue = {"Put": {"TableName": self.db.table, "ConditionExpression": "attribute_not_exists(pk)",
                         "Item": _attrs({"pk": pk, "sk": entry["queue_sk"], "entry_id": entry["entry_id"],
                                         "customer_id": entry["customer_id"], "quantity": entry["quantity"],
                                         "joined_at": entry["joined_at"], **_section(entry)})}}
        # the customer's own list of the lines they joined: what their erasure walks
        # (adapters/personal_data_store.py), since the line's keys are the event's
        joined = {"Put": {"TableName": self.db.table, "Item": _attrs({
            "pk": f"CUSTOMER#{entry['customer_id']}", "sk": f"WAITLIST#{event_id}", "event_id": event_id})}}
        return self.db._transact_all([("entry", marker), ("queue", queue), ("joined", joined)])

    def waitlist_position(self, event_id: str, queue_sk: str) -> int:
        """1 + how many queue items sort before ``queue_sk`` (0 when it is not in the queue)."""
        kwargs: dict[str, Any] = {
            "TableName": self.db.table, "Select": "COUNT", "ConsistentRead": True,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :mine",
            "ExpressionAttributeValues": _attrs({":pk": f"WAITLIST#{event_id}", ":low": "Q#", ":mine": queue_sk}),
        }
        count = 0
        while True:
            answer = self.db.client.query(**kwargs)
            count += int(answer.get("Count", 0))
            if "LastEvaluatedKey" not in answer:
                break
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
        mine = self.db.client.get_item(TableName=self.db.table, ConsistentRead=True,
                                    Key=_attrs({"pk": f"WAITLIST#{event_id}", "sk": queue_sk}))
        return count if "Item" in mine else 0

    def waitlist_leave(self, event_id: str, customer_id: str, entry: dict[str, Any]) -> bool:
        """Remove a waiting entry and its queue item; False if it stopped waiting meanwhile."""
        pk = f"WAITLIST#{event_id}"
        return self.db._transact_all([
            ("entry", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": f"CUST#{customer_id}"}),
                        "ConditionExpression": "#state = :waiting AND entry_id = :entry",
                        "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":waiting": "WAITING", ":entry": entry["entry_id"]})}}),
            ("queue", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": entry["queue_sk"]}),
                        "ConditionExpression": "attribute_exists(pk)"}}),
        ])

    def waitlist_head(self, event_id: str) -> dict[str, Any] | None:
        answer = self.db.client.query(
            TableName=self.db.table, ConsistentRead=True, Limit=1,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :q)",
            ExpressionAttributeValues=_attrs({":pk": f"WAITLIST#{event_id}", ":q": "Q#"}),
        )
        items = answer.get("Items") or []
        return _plain(items[0]) if items else None

    def waitlist_line(self, event_id: str, limit: int) -> list[dict[str, Any]]:
        """The first ``limit`` queue items, in order of joining (a line per zone or price category
        looks past a head that waits for its own section's places)."""
        answer = self.db.client.query(
            TableName=self.db.table, ConsistentRead=True, Limit=limit,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :q)",
            ExpressionAttributeValues=_attrs({":pk": f"WAITLIST#{event_id}", ":q": "Q#"}),
        )
        return [_plain(item) for item in answer.get("Items") or []]

    def waitlist_offers(self, event_id: str) -> list[dict[str, Any]]:
        return self.db._query_prefix(f"WAITLIST#{event_id}", "OFFER#")

    def waitlist_claim(self, event_id: str, head: dict[str, Any], at: str) -> bool:
        """Take the head off the queue as a PENDING offer, conditionally: of two relays racing for
        the same entry, exactly one succeeds."""
        pk = f"WAITLIST#{event_id}"
        return self.db._transact_all([
            ("queue", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": head["sk"]}),
                        "ConditionExpression": "attribute_exists(pk)"}}),
            ("offer", {"Put": {"TableName": self.db.table, "ConditionExpression": "attribute_not_exists(pk)",
                     "Item": _attrs({"pk": pk, "sk": f"OFFER#{head['entry_id']}", "entry_id": head["entry_id"],
                                     "customer_id": head["customer_id"], "quantity": head["quantity"],
                                     "joined_at": head["joined_at"], "queue_sk": head["sk"], "state": "PENDING",
                                     "claimed_at": at, **_section(head)})}}),
            ("entry", self._waitlist_marker_update(pk, head["customer_id"], head["entry_id"], {"state": "OFFERING"})),
        ])

    def waitlist_offered(self, event_id: str, offer: dict[str, Any], booking_id: str, hold_expires_at: str) -> bool:
        pk = f"WAITLIST#{event_id}"
        return self.db._transact_all([
            ("offer", {"Update": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "UpdateExpression": "SET #state = :offered, booking_id = :booking",
                        "ConditionExpression": "#state = :pending",
                        "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":offered": "OFFERED", ":pending": "PENDING",
                                                             ":booking": booking_id})}}),
            ("entry", self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"], {
                "state": "OFFERED", "booking_id": booking_id, "hold_expires_at": hold_expires_at})),
        ])

    def waitlist_unclaim(self, event_id: str, offer: dict[str, Any]) -> bool:
        """A PENDING offer whose places were not there: back into the queue at its old place."""
        pk = f"WAITLIST#{event_id}"
        return self.db._transact_all([
            ("offer", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "ConditionExpression": "#state = :pending", "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":pending": "PENDING"})}}),
            ("queue", {"Put": {"TableName": self.db.table, "ConditionExpression": "attribute_not_exists(pk)",
                     "Item": _attrs({"pk": pk, "sk": offer["queue_sk"], "entry_id": offer["entry_id"],
                                     "customer_id": offer["customer_id"], "quantity": offer["quantity"],
                                     "joined_at": offer["joined_at"]})}}),
            ("entry", self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"], {"state": "WAITING"})),
        ])

    def waitlist_close(self, event_id: str, offer: dict[str, Any], state: str) -> bool:
        """An OFFERED entry whose booking was paid (DONE) or lapsed (PASSED) leaves the offers."""
        pk = f"WAITLIST#{event_id}"
        return self.db._transact_all([
            ("offer", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "ConditionExpression": "#state = :offered", "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":offered": "OFFERED"})}}),
            ("entry", self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"], {"state": state})),
        ])

    def waitlist_skip(self, event_id: str, head: dict[str, Any], reason: str) -> bool:
        pk = f"WAITLIST#{event_id}"
        return self.db._transact_all([
            ("queue", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": head["sk"]}),
                        "ConditionExpression": "attribute_exists(pk)"}}),
            ("entry", self._waitlist_marker_update(pk, head["customer_id"], head["entry_id"],
                                         {"state": "SKIPPED", "reason": reason})),
        ])

    def waitlist_offer_failed(self, event_id: str, offer: dict[str, Any], failures: int) -> bool:
        """Count a failed attempt at a PENDING offer's hold (it stays first in line for now)."""
        return self.db._transact_all([
            ("offer", {"Update": {"TableName": self.db.table, "Key": _attrs({"pk": f"WAITLIST#{event_id}", "sk": offer["sk"]}),
                        "UpdateExpression": "SET failures = :failures", "ConditionExpression": "#state = :pending",
                        "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":failures": failures, ":pending": "PENDING"})}}),
        ])

    def waitlist_drop_offer(self, event_id: str, offer: dict[str, Any], reason: str) -> bool:
        """A PENDING offer that cannot be made: it leaves the line, its entry SKIPPED with the reason."""
        pk = f"WAITLIST#{event_id}"
        return self.db._transact_all([
            ("offer", {"Delete": {"TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": offer["sk"]}),
                        "ConditionExpression": "#state = :pending", "ExpressionAttributeNames": {"#state": "state"},
                        "ExpressionAttributeValues": _attrs({":pending": "PENDING"})}}),
            ("entry", self._waitlist_marker_update(pk, offer["customer_id"], offer["entry_id"],
                                         {"state": "SKIPPED", "reason": reason})),
        ])

    def _waitlist_marker_update(self, pk: str, customer_id: str, entry_id: str, changes: dict[str, Any]) -> dict:
        names = {f"#f{i}": key for i, key in enumerate(changes)}
        values = {f":v{i}": value for i, value in enumerate(changes.values())}
        return {"Update": {
            "TableName": self.db.table, "Key": _attrs({"pk": pk, "sk": f"CUST#{customer_id}"}),
            "UpdateExpression": "SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(changes))),
            "ConditionExpression": "entry_id = :entry",
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": _attrs({**values, ":entry": entry_id}),
        }}


def _section(item: dict[str, Any]) -> dict[str, Any]:
    """The zone or price category an entry waits for (none: any place of the event)."""
    return {key: item[key] for key in ("zone", "price_category") if item.get(key)}
