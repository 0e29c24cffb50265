"""DynamoDB storage of the mail policy (ports.MailPolicy), on the bookings table:

  pk                        sk                    what
  MAIL#<address key>        SUPPRESSED            a bounced or complaining address: ``reason``, ``at``
  MAIL#<address key>        RATE#<hour>           messages counted to the address in that UTC hour:
                                                  ``sent``, ``ids`` (their dedup ids), ``ttl``
  CUSTOMER#<customer>       CONTACT#<address key> the customer's standing with an address:
                                                  ``status`` (pending | confirmed), ``token_hash``,
                                                  ``expires_at``, ``at``, ``confirmed_at``
  CUSTOMER#<customer>       NEWADDR#<day>         the unconfirmed addresses the customer named that
                                                  UTC day (``keys``, a set), ``ttl``: each may cost
                                                  one confirmation message

The address key is a digest of the address (services/mail_policy.py): the table holds no address
here, and each question the notifier asks is one GetItem or one conditional write.
"""
from __future__ import annotations

from typing import Any

import boto3
from botocore.exceptions import ClientError

from ..clock import parse_iso
from .codec import _attrs, _code, _plain

PENDING, CONFIRMED = "pending", "confirmed"


#: How long the announcement of a confirmed address stays for the relay (as a booking's outbox).
OUTBOX_RETENTION_SECONDS = 7 * 24 * 3600


def confirmed_outbox(customer_id: str, address_key: str, at: str) -> dict[str, Any]:
    """The outbox item that says an address was confirmed (no address: its digest)."""
    return {"pk": f"CUSTOMER#{customer_id}", "sk": f"OUTBOX#CONTACT#{address_key}#{at}",
            "type": "contact.confirmed", "customer_id": customer_id, "address_key": address_key, "at": at,
            "ttl": int(parse_iso(at).timestamp()) + OUTBOX_RETENTION_SECONDS}


class MailPolicyStore:
    def __init__(self, table_name: str, client: Any | None = None) -> None:
        self.table = table_name
        self.client = client or boto3.client("dynamodb")

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        answer = self.client.get_item(TableName=self.table, ConsistentRead=True, Key=_attrs({"pk": pk, "sk": sk}))
        return _plain(answer["Item"]) if "Item" in answer else None

    # ------------------------------------------------------------------------------ suppression

    def is_suppressed(self, address_key: str) -> bool:
        return self._get(f"MAIL#{address_key}", "SUPPRESSED") is not None

    def suppress(self, address_key: str, reason: str, at: str) -> bool:
        try:
            self.client.put_item(TableName=self.table, ConditionExpression="attribute_not_exists(pk)",
                                 Item=_attrs({"pk": f"MAIL#{address_key}", "sk": "SUPPRESSED",
                                              "reason": reason, "at": at}))
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    # ------------------------------------------------------------------------------ contacts

    def contact(self, customer_id: str, address_key: str) -> dict[str, Any] | None:
        item = self._get(f"CUSTOMER#{customer_id}", f"CONTACT#{address_key}")
        return None if item is None else {k: v for k, v in item.items() if k not in ("pk", "sk")}

    def request_confirmation(self, customer_id: str, address_key: str, token_hash: str, expires_at: str,
                             at: str) -> bool:
        try:
            self.client.put_item(
                TableName=self.table,
                Item=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"CONTACT#{address_key}", "status": PENDING,
                             "token_hash": token_hash, "expires_at": expires_at, "at": at}),
                ConditionExpression="attribute_not_exists(pk) OR (#s = :pending AND expires_at < :at)",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues=_attrs({":pending": PENDING, ":at": at}))
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    def withdraw_confirmation(self, customer_id: str, address_key: str, token_hash: str) -> None:
        try:
            self.client.delete_item(
                TableName=self.table, Key=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"CONTACT#{address_key}"}),
                ConditionExpression="#s = :pending AND token_hash = :t", ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues=_attrs({":pending": PENDING, ":t": token_hash}))
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise

    def confirm_contact(self, customer_id: str, address_key: str, token_hash: str, now: str) -> bool:
        """Confirm the address, and in the same transaction announce it (``contact.confirmed``, an
        outbox item the relay publishes): the notifier then delivers the messages held for it."""
        key = {"pk": f"CUSTOMER#{customer_id}", "sk": f"CONTACT#{address_key}"}
        try:
            self.client.transact_write_items(TransactItems=[
                {"Update": {
                    "TableName": self.table, "Key": _attrs(key),
                    "UpdateExpression": "SET #s = :confirmed, confirmed_at = :now",
                    "ConditionExpression": "#s = :pending AND token_hash = :t AND expires_at > :now",
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": _attrs({":pending": PENDING, ":confirmed": CONFIRMED,
                                                         ":t": token_hash, ":now": now})}},
                {"Put": {"TableName": self.table, "Item": _attrs(confirmed_outbox(customer_id, address_key, now))}},
            ])
            return True
        except ClientError as exc:
            if _code(exc) not in ("ConditionalCheckFailedException", "TransactionCanceledException"):
                raise
        # a second click on the same link: already confirmed by this very token
        item = self._get(key["pk"], key["sk"]) or {}
        return item.get("status") == CONFIRMED and item.get("token_hash") == token_hash

    def pending_contacts(self, customer_id: str, now: str) -> int:
        request: dict[str, Any] = {
            "TableName": self.table, "Select": "COUNT", "ConsistentRead": True,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :contact)",
            "FilterExpression": "#s = :pending AND expires_at > :now", "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": _attrs({":pk": f"CUSTOMER#{customer_id}", ":contact": "CONTACT#",
                                                 ":pending": PENDING, ":now": now})}
        count = 0
        while True:
            answer = self.client.query(**request)
            count += int(answer.get("Count", 0))
            if "LastEvaluatedKey" not in answer:
                return count
            request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    def claim_new_address(self, customer_id: str, address_key: str, day: str, limit: int, expires: int) -> bool:
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs({"pk": f"CUSTOMER#{customer_id}", "sk": f"NEWADDR#{day}"}),
                UpdateExpression="ADD #keys :key SET #ttl = :ttl",
                ConditionExpression="attribute_not_exists(#keys) OR size(#keys) < :limit OR contains(#keys, :one)",
                ExpressionAttributeNames={"#keys": "keys", "#ttl": "ttl"},
                ExpressionAttributeValues=_attrs({":key": {address_key}, ":one": address_key, ":limit": limit,
                                                  ":ttl": expires}))
            return True
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise
            return False

    def own_contact(self, customer_id: str, address_key: str, at: str) -> None:
        self.client.put_item(TableName=self.table, Item=_attrs({
            "pk": f"CUSTOMER#{customer_id}", "sk": f"CONTACT#{address_key}", "status": CONFIRMED, "via": "identity",
            "at": at, "confirmed_at": at}))

    # ------------------------------------------------------------------------------ sending limit

    def count_send(self, address_key: str, hour: str, dedup_id: str, limit: int, expires: int) -> bool:
        key = {"pk": f"MAIL#{address_key}", "sk": f"RATE#{hour}"}
        try:
            self.client.update_item(
                TableName=self.table, Key=_attrs(key), UpdateExpression="ADD sent :one, ids :ids SET #ttl = :ttl",
                ConditionExpression="(attribute_not_exists(sent) OR sent < :limit) AND NOT contains(ids, :id)",
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues=_attrs({":one": 1, ":ids": {dedup_id}, ":id": dedup_id, ":limit": limit,
                                                  ":ttl": expires}))
            return True
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise
        item = self._get(key["pk"], key["sk"]) or {}
        return dedup_id in (item.get("ids") or set())
