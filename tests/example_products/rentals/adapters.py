"""The damage charges' items, a store part the table's store is assembled with:

  DAMAGE#<damage_id>  META   the charge, and the provider payment that settled it
"""
from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from holdfast.adapters.codec import Table, _attrs, _code


class DamageStore(Table):
    def record_damage_payment(self, damage_id: str, payment_id: str, amount: str, at: str) -> bool:
        """The charge's payment, written once; False when it was recorded before."""
        try:
            self.client.put_item(TableName=self.table, ConditionExpression="attribute_not_exists(pk)", Item=_attrs({
                "pk": f"DAMAGE#{damage_id}", "sk": "META", "payment_id": payment_id, "amount": amount, "paid_at": at}))
            return True
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise

    def damage_payment(self, damage_id: str) -> dict[str, Any] | None:
        return self._get(f"DAMAGE#{damage_id}", "META")

    #: the calls the table's store answers through this part (adapters/dynamo.py binds each)
    STORE_CALLS = (record_damage_payment, damage_payment)
