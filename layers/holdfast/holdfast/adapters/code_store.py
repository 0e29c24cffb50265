"""Codes of an offering (issue 45, domain/codes.py) and their counters:

  EVENT#<offering>              CODE#<code>             the code as the organizer made it
  INV#<offering>#CODE#<code>    CODE#<code>             its uses: a counter shaped like a pool
                                                        (capacity = max_uses, available/held/sold)
  INV#<offering>#CODE#<code>#BY#<h>  (same)             one customer's allowance of it, made on the
                                                        customer's first use (capacity = per_customer)
  CODETRIES#<h>                 <minute>                a customer's tries of codes in one minute

The counters are changed only by the claims of the holds that use the code (inventory_store.py
``counter_claim``), in the hold's own transaction.
"""
from __future__ import annotations

import hashlib
from typing import Any

from botocore.exceptions import ClientError

from ..domain.codes import COMPS_POOL, UNLIMITED, allowance_pool, code_pool
from ..ports import ItemExists
from .codec import Table, _attrs, _code, _int, put_new
from .inventory_store import pool_key

DEFINITION = "CODE#"
#: How long a minute's count of tries is kept (DynamoDB's TTL removes it).
TRIES_KEPT_SECONDS = 300


def definition_key(offering_id: str, code: str) -> dict[str, str]:
    return {"pk": f"EVENT#{offering_id}", "sk": f"{DEFINITION}{code}"}


def uses(counter: dict[str, Any] | None) -> int:
    return _int(counter and counter.get("held")) + _int(counter and counter.get("sold"))


class DynamoCodeStore:
    """The codes part of the table (dynamo.py ``PARTS``)."""

    def __init__(self, db: Table) -> None:
        self.db = db

    def put_code(self, offering_id: str, code: dict[str, Any]) -> None:
        """The code and its counter, in one write; Conflicting when the offering has the code
        already (ended or not: a code is never made twice)."""
        capacity = int(code.get("max_uses") or UNLIMITED)
        counter = {**pool_key(offering_id, code_pool(code["code"])), "event_id": offering_id,
                   "capacity": capacity, "available": capacity, "held": 0, "sold": 0}
        written = self.db._transact_all([
            ("code", put_new(self.db.table, {**definition_key(offering_id, code["code"]), **code,
                                             "offering_id": offering_id})),
            ("counter", put_new(self.db.table, counter)),
        ])
        if not written:
            raise ItemExists(code["code"])

    def get_code(self, offering_id: str, code: str) -> dict[str, Any] | None:
        return self.db._get(**definition_key(offering_id, code))

    def list_codes(self, offering_id: str) -> list[dict[str, Any]]:
        """Every code of the offering, with ``uses`` (held and sold) from its counter."""
        codes = self.db._query_prefix(f"EVENT#{offering_id}", DEFINITION)
        counters = self.db._batch_get([pool_key(offering_id, code_pool(item["code"])) for item in codes])
        for item in codes:
            key = pool_key(offering_id, code_pool(item["code"]))
            item["uses"] = uses(counters.get((key["pk"], key["sk"])))
        return codes

    def end_code(self, offering_id: str, code: str, at: str) -> bool:
        """Mark the code ended (False when the offering has no such code); its counter stays,
        so the uses already held are still given back and sold as they go."""
        try:
            self.db.client.update_item(
                TableName=self.db.table, Key=_attrs(definition_key(offering_id, code)),
                UpdateExpression="SET ended_at = if_not_exists(ended_at, :at)",
                ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues=_attrs({":at": at}))
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def ensure_allowance(self, offering_id: str, code: str, customer_id: str, per_customer: int) -> None:
        """The customer's allowance of the code, made full on first use (a second maker finds it
        made and changes nothing); the hold's claim then takes from it like from a pool."""
        self._make_once(offering_id, allowance_pool(code, customer_id), per_customer)

    def ensure_comps(self, offering_id: str) -> None:
        """The offering's counter of comps (domain/codes.py ``COMPS_POOL``), made on its first
        comp; a second maker finds it made and changes nothing."""
        self._make_once(offering_id, COMPS_POOL, UNLIMITED)

    def _make_once(self, offering_id: str, pool: str, capacity: int) -> None:
        """A counter pool of the offering, full, written only if absent (a second maker changes nothing)."""
        item = {**pool_key(offering_id, pool), "event_id": offering_id,
                "capacity": capacity, "available": capacity, "held": 0, "sold": 0}
        try:
            self.db.client.put_item(TableName=self.db.table, Item=_attrs(item),
                                    ConditionExpression="attribute_not_exists(pk)")
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise

    def comps_given(self, offering_id: str) -> int:
        """The places of the offering given away and kept (its comps counter's sold)."""
        counter = self.db._get(**pool_key(offering_id, COMPS_POOL))
        return _int(counter and counter.get("sold"))

    def count_code_try(self, customer_id: str, minute: str, limit: int, now_epoch: int) -> bool:
        """Count one try of a code by the customer in this minute; False when the minute's tries
        are used up (nothing counted)."""
        digest = hashlib.sha256(customer_id.encode()).hexdigest()[:20]
        try:
            self.db.client.update_item(
                TableName=self.db.table, Key=_attrs({"pk": f"CODETRIES#{digest}", "sk": minute}),
                UpdateExpression="ADD tries :one SET #ttl = :ttl",
                ConditionExpression="attribute_not_exists(tries) OR tries < :limit",
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues=_attrs({":one": 1, ":limit": limit, ":ttl": now_epoch + TRIES_KEPT_SECONDS}))
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True
