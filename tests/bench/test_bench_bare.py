"""The bare-transaction yardstick sends a real hold's transaction again: the same items, operations,
expressions and bodies; the pool counter and gate shard among as many shared items as a sale has,
every other item on a fresh key."""
from __future__ import annotations

import random

from devstack.measure import bench_bare

SAMPLE = {"TransactItems": [
    {"Put": {"TableName": "t", "Item": {"pk": {"S": "IDEMPOTENCY#c#k"}, "sk": {"S": "booking"},
                                        "body": {"S": "x" * 500}}, "ConditionExpression": "attribute_not_exists(pk)"}},
    {"Update": {"TableName": "t", "Key": {"pk": {"S": "INV#e#p3"}, "sk": {"S": "p3"}},
                "UpdateExpression": "SET #src = #src - :n, #dst = #dst + :n", "ConditionExpression": "#src >= :n",
                "ExpressionAttributeNames": {"#src": "available", "#dst": "held"},
                "ExpressionAttributeValues": {":n": {"N": "1"}}}},
    {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "GATE#e#07"}, "sk": {"S": "GATE"}},
                        "ConditionExpression": "attribute_not_exists(cancelled_at)"}},
    {"Update": {"TableName": "t", "Key": {"pk": {"S": "CUSTOMER#c"}, "sk": {"S": "HOLDS#EVENT#e"}},
                "UpdateExpression": "ADD active :one", "ConditionExpression": "attribute_not_exists(active) OR active < :l",
                "ExpressionAttributeValues": {":one": {"N": "1"}, ":l": {"N": "5"}}}}]}


def test_the_bare_transaction_is_the_sampled_hold_with_its_keys_moved():
    items = bench_bare.shape(SAMPLE)
    assert [(i["op"], i["role"]) for i in items] == [("Put", "fresh"), ("Update", "pool"),
                                                     ("ConditionCheck", "gate"), ("Update", "fresh")]
    rng = random.Random(1)
    requests = [bench_bare._transaction(items, "run", hot_items=20, rng=rng) for _ in range(200)]
    first = requests[0]
    for sent, original in zip(first, SAMPLE["TransactItems"]):
        (op, body), (op0, body0) = next(iter(sent.items())), next(iter(original.items()))
        assert op == op0 and body["TableName"] == bench_bare.TABLE
        for field in ("UpdateExpression", "ConditionExpression", "ExpressionAttributeNames", "ExpressionAttributeValues"):
            assert body.get(field) == body0.get(field)  # the same expressions and conditions
    assert first[0]["Put"]["Item"]["body"] == SAMPLE["TransactItems"][0]["Put"]["Item"]["body"]
    # new records and the customer's counter on fresh keys; the counters and gates shared, spread
    assert len({r[0]["Put"]["Item"]["pk"]["S"] for r in requests}) == 200
    assert len({r[3]["Update"]["Key"]["pk"]["S"] for r in requests}) == 200
    assert len({r[1]["Update"]["Key"]["pk"]["S"] for r in requests}) == 20
    assert len({r[2]["ConditionCheck"]["Key"]["pk"]["S"] for r in requests}) == bench_bare.GATE_SHARDS
    assert SAMPLE["TransactItems"][0]["Put"]["Item"]["pk"]["S"] == "IDEMPOTENCY#c#k"  # the sample is not changed


def test_an_orders_transaction_names_each_counter_and_gate_once():
    """An order's transaction updates a pool and checks a gate per line; sent again, its pool updates
    and gate checks land on distinct seeded items (a transaction may name an item once), even when
    the offering has fewer pools than the order has lines."""
    order = {"TransactItems": [*SAMPLE["TransactItems"][1:3] * 4]}
    items = bench_bare.shape(order)
    assert bench_bare._hot_count(items, hot_items=2) == 4
    rng = random.Random(2)
    for _ in range(200):
        sent = bench_bare._transaction(items, "run", hot_items=2, rng=rng)
        keys = [next(iter(item.values()))["Key"]["pk"]["S"] for item in sent]
        assert len(set(keys)) == len(keys) == 8, keys
