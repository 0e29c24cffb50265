"""The bare-transaction yardstick copies a real hold's transaction: its items, operations and sizes."""
from __future__ import annotations

from devstack import bench_bare


def test_the_bare_transaction_has_the_sample_holds_items_on_fresh_keys_and_one_hot_item():
    sample = {"TransactItems": [
        {"Update": {"TableName": "t", "Key": {"pk": {"S": "EVENT#1"}}, "UpdateExpression": "ADD held :q",
                    "ExpressionAttributeValues": {":q": {"N": "1"}}}},
        {"Put": {"TableName": "t", "Item": {"pk": {"S": "BOOKING#1"}, "body": {"S": "x" * 500}}}},
        {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "CUSTOMER#1"}}, "ConditionExpression": "c"}}]}
    items = bench_bare.shape(sample)
    assert [i["op"] for i in items] == ["Update", "Put", "ConditionCheck"]
    assert items[1]["bytes"] > 500
    first, second = bench_bare._transaction(items, "run"), bench_bare._transaction(items, "run")
    assert [next(iter(i)) for i in first] == ["Update", "Put", "ConditionCheck"]
    assert first[0]["Update"]["Key"] == second[0]["Update"]["Key"]  # the hot item, shared
    assert first[1]["Put"]["Item"]["pk"] != second[1]["Put"]["Item"]["pk"]  # new records, new keys
    assert len(first[1]["Put"]["Item"]["body"]["S"]) == items[1]["bytes"]
