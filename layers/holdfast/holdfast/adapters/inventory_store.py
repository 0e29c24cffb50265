"""Inventory storage: the items claims change (pool shards and named units) and their reads.

  EVENT#<event_id>  POOL#<nn>        a counted-inventory shard: capacity/available/held/sold
  EVENT#<event_id>  UNIT#<seat_id>   a named unit (seat): state, booking_id
  RES#<resource>#<day>  G#<HH:MM>    a time granule of a resource (granule_claims.py)

A claim is one conditional change to one of these items; ``claim_items`` turns what a booking
occupies and a move into labelled transaction items (``claim:<pool or unit id>``), so that a
cancelled transaction names the claims that failed.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..domain.inventory import Move, Places, Pool
from .granule_claims import granule_claim, granule_label
from .codec import MAX_SORT_KEY_BYTES, Labelled, Table, _attrs, _int, _plain

CLAIM = "claim:"


def claim_items(table: str, event_id: str, booking_id: str, places: Places, move: Move) -> list[Labelled]:
    """One labelled conditional update per claim: n taken from a pool, one named unit, or one
    time granule of a resource."""
    event_pk = f"EVENT#{event_id}"
    items: list[Labelled] = [(CLAIM + pool_id, counter_claim(table, event_pk, pool_id, count, move))
                             for pool_id, count in places.pools]
    items += [(CLAIM + unit, unit_claim(table, event_pk, unit, booking_id, move)) for unit in places.units]
    items += [(CLAIM + granule_label(granule), granule_claim(table, granule, booking_id, move))
              for granule in places.granules]
    return items


def counter_claim(table: str, pk: str, sk: str, count: int, move: Move) -> dict:
    return {"Update": {
        "TableName": table,
        "Key": _attrs({"pk": pk, "sk": sk}),
        "UpdateExpression": "SET #src = #src - :n, #dst = #dst + :n",
        "ConditionExpression": "#src >= :n",
        "ExpressionAttributeNames": {"#src": move.source, "#dst": move.target},
        "ExpressionAttributeValues": _attrs({":n": count}),
    }}


def unit_claim(table: str, pk: str, unit: str, booking_id: str, move: Move) -> dict:
    values: dict[str, Any] = {":src": move.source, ":dst": move.target}
    if move.source == "available":
        condition = "#state = :src"
    else:
        # Only the booking that holds a unit may move it on.
        condition = "#state = :src AND booking_id = :booking"
        values[":booking"] = booking_id
    if move.target == "available":
        expression = "SET #state = :dst REMOVE booking_id"
    else:
        expression = "SET #state = :dst, booking_id = :booking"
        values[":booking"] = booking_id
    return {"Update": {
        "TableName": table,
        "Key": _attrs({"pk": pk, "sk": f"UNIT#{unit}"}),
        "UpdateExpression": expression,
        "ConditionExpression": f"attribute_exists(pk) AND {condition}",
        "ExpressionAttributeNames": {"#state": "state"},
        "ExpressionAttributeValues": _attrs(values),
    }}


class InventoryStore(Table):
    def read_pools(self, event_id: str) -> list[Pool]:
        items = self._query_prefix(f"EVENT#{event_id}", "POOL#")
        return [
            Pool(item["sk"], _int(item["capacity"]), _int(item["available"]), _int(item["held"]), _int(item["sold"]))
            for item in items
        ]

    def read_units(self, event_id: str, unit_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        # A seat id too long for a sort key cannot exist; DynamoDB would refuse the whole read.
        keys = [{"pk": f"EVENT#{event_id}", "sk": f"UNIT#{unit}"} for unit in unit_ids
                if len(f"UNIT#{unit}".encode()) <= MAX_SORT_KEY_BYTES]
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 100):
            pending = {self.table: {"Keys": [_attrs(key) for key in keys[start:start + 100]], "ConsistentRead": True}}
            while pending:
                answer = self.client.batch_get_item(RequestItems=pending)
                for item in answer.get("Responses", {}).get(self.table, []):
                    plain = _plain(item)
                    found[plain["sk"].removeprefix("UNIT#")] = plain
                pending = answer.get("UnprocessedKeys") or {}
        return found

    def list_units(self, event_id: str) -> list[dict[str, Any]]:
        return self._query_prefix(f"EVENT#{event_id}", "UNIT#", projection="sk, #state", names={"#state": "state"})

    def seat_states(self, event_id: str) -> dict[str, str]:
        """Every seat of an event and its state, eventually consistent (the public seat map)."""
        kwargs: dict[str, Any] = {
            "TableName": self.table, "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": _attrs({":pk": f"EVENT#{event_id}", ":prefix": "UNIT#"}),
            "ProjectionExpression": "sk, #state", "ExpressionAttributeNames": {"#state": "state"},
        }
        states: dict[str, str] = {}
        while True:
            answer = self.client.query(**kwargs)
            for item in answer.get("Items", []):
                states[item["sk"]["S"].removeprefix("UNIT#")] = item["state"]["S"]
            if "LastEvaluatedKey" not in answer:
                return states
            kwargs = {**kwargs, "ExclusiveStartKey": answer["LastEvaluatedKey"]}

