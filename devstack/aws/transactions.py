"""A faster TransactWriteItems for moto 5.2.5 DynamoDB, with DynamoDB's semantics.

moto makes a transaction undoable by deep-copying every table the transaction touches, once per
item, before it starts (table, items, indexes and the whole stream history). The cost grows with
the table: after a few thousand bookings a single hold took seconds, under the lock that makes
moto's writes atomic, and every other call waited behind it.

This version does what DynamoDB does: evaluate every item's condition against the state before the
transaction; if any fails, cancel with per-item reasons and write nothing; otherwise apply the
writes. Only the items the transaction touches are saved beforehand, so that an error while
applying (an invalid update expression, say) can put them back. Items of one transaction are
distinct (moto's own rule, kept), so checking all conditions first is the same as moto's
check-as-you-go. It relies on the service lock (runtime.py) for isolation, as moto's does.
"""
from __future__ import annotations

import copy
from typing import Any

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    from moto.dynamodb.exceptions import (
        MockValidationException,
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )
    from moto.dynamodb import models as dynamodb_models
    from moto.dynamodb.models import DynamoDBBackend

    filter_expression = dynamodb_models.get_filter_expression

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        if len(transact_items) > 100:
            raise TooManyTransactionsException()
        seen: set[tuple[str, str]] = set()
        planned: list[tuple[str, dict[str, Any], str, dict[str, Any], Any]] = []
        reasons: list[tuple[Any, Any, Any]] = []
        for item in transact_items:
            if len(item) > 1:
                raise TransactWriteSingleOpException
            op_type, op = next(iter(item.items()))
            original_item = None
            try:
                if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                    raise ValueError("Unsupported transaction operation")
                table_name = op["TableName"]
                if op_type == "Put":
                    table = self.get_table(table_name)
                    attrs = op["Item"]
                    key = {table.hash_key_attr: attrs[table.hash_key_attr]}
                    if table.range_key_attr is not None:
                        key[table.range_key_attr] = attrs[table.range_key_attr]
                else:
                    key = op["Key"]
                unique = (str(table_name), str(dict(sorted(key.items()))))
                if unique in seen:
                    raise MultipleTransactionsException()
                seen.add(unique)
                current = self.get_item(table_name, key)
                condition = op.get("ConditionExpression")
                if condition is not None:
                    check = filter_expression(condition, op.get("ExpressionAttributeNames"),
                                              op.get("ExpressionAttributeValues"))
                    if not check.expr(current):
                        if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                            original_item = current.to_json()["Attributes"]
                        reasons.append(("ConditionalCheckFailed", "The conditional request failed", original_item))
                        continue
                planned.append((op_type, op, table_name, key, copy.deepcopy(current)))
                reasons.append((None, None, None))
            except (MultipleTransactionsException, MockValidationException):
                raise
            except Exception as exc:  # noqa: BLE001 - reported per item, as moto does
                reasons.append((type(exc).__name__, str(exc), original_item))
        if any(code is not None for code, _, _ in reasons):
            raise TransactionCanceledException(reasons)

        applied: list[tuple[str, dict[str, Any], Any]] = []
        try:
            for op_type, op, table_name, key, before in planned:
                if op_type == "ConditionCheck":
                    continue
                applied.append((table_name, key, before))
                names, values = op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
                if op_type == "Put":
                    self.put_item(table_name, op["Item"], expression_attribute_names=names,
                                  expression_attribute_values=values)
                elif op_type == "Delete":
                    self.delete_item(table_name, key, expression_attribute_names=names,
                                     expression_attribute_values=values)
                else:
                    self.update_item(table_name, key, update_expression=op["UpdateExpression"],
                                     expression_attribute_names=names, expression_attribute_values=values)
        except Exception:
            for table_name, key, before in reversed(applied):
                table = self.get_table(table_name)
                if before is None:
                    self.delete_item(table_name, key)
                else:
                    table.put_item(before.to_json()["Attributes"])
            raise

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    _installed = True
