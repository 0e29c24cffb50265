"""The bench's yardstick: how many DynamoDB Local transactions of a hold's shape this machine runs.

`make bench` reports served holds per second as a ratio to this rate, measured in the same run
against the same DynamoDB Local, from as many client processes as the hold function has workers:
the ratio is the engine's overhead (HTTP, Lambda stand-in, handler, its other calls), which
compares from machine to machine where absolute rates do not.

The shape comes from one real hold: the TransactWriteItems request a worker of the hold route made
(devstack/aws/workers.py keeps one per route). Each bare transaction has the same number of items,
the same operations and item sizes: updates go to one shared hot item (as a hold's counter update
goes to its offering's), with a condition that holds; puts and condition checks go to fresh keys
with `attribute_not_exists`, as a new booking's records do. Nothing else runs around it.
"""
from __future__ import annotations

import multiprocessing
import time
import uuid
from typing import Any

TABLE = "bench-bare-transactions"


def _size(value: Any) -> int:
    return len(repr(value))


def shape(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """[{"op": "Update"|"Put"|"ConditionCheck"|"Delete", "bytes": approximate item size}] of a sample."""
    items = []
    for item in sample.get("TransactItems") or []:
        for op, body in item.items():
            items.append({"op": op, "bytes": _size(body.get("Item") or body.get("ExpressionAttributeValues") or {})})
    return items


def _client(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="eu-central-1",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 10, "mode": "standard"},
                                      max_pool_connections=4))


def _transaction(items: list[dict[str, Any]], run: str) -> list[dict[str, Any]]:
    request = []
    for n, item in enumerate(items):
        if item["op"] == "Update":
            request.append({"Update": {
                "TableName": TABLE, "Key": {"pk": {"S": f"{run}#hot"}, "sk": {"S": f"counter{n}"}},
                "UpdateExpression": "ADD held :one", "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeValues": {":one": {"N": "1"}}}})
        else:
            key = {"pk": {"S": f"{run}#{uuid.uuid4()}"}, "sk": {"S": f"item{n}"}}
            if item["op"] == "Put":
                request.append({"Put": {"TableName": TABLE, "Item": {**key, "body": {"S": "x" * max(1, item["bytes"])}},
                                        "ConditionExpression": "attribute_not_exists(pk)"}})
            else:
                request.append({"ConditionCheck": {"TableName": TABLE, "Key": key,
                                                   "ConditionExpression": "attribute_not_exists(pk)"}})
    return request


def _client_loop(endpoint: str, items: list[dict[str, Any]], run: str, start_at: float, seconds: float,
                 queue: Any) -> None:
    client = _client(endpoint)
    while time.time() < start_at:
        time.sleep(0.005)
    done = failed = 0
    end = start_at + seconds
    while time.time() < end:
        try:
            client.transact_write_items(TransactItems=_transaction(items, run))
            done += 1
        except Exception:  # noqa: BLE001 - counted: a conflict on the hot item is part of the shape
            failed += 1
    queue.put((done, failed))


def measure(endpoint: str, sample: dict[str, Any] | None, clients: int, seconds: float = 10.0) -> dict[str, Any]:
    """Transactions per second of the sample's shape from `clients` processes for `seconds`."""
    items = shape(sample) if sample else [{"op": "Update", "bytes": 40}, {"op": "Put", "bytes": 600},
                                          {"op": "Put", "bytes": 300}, {"op": "Put", "bytes": 300}]
    client = _client(endpoint)
    try:
        client.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}])
    except client.exceptions.ResourceInUseException:
        pass
    run = uuid.uuid4().hex[:8]
    for n, item in enumerate(items):
        if item["op"] == "Update":
            client.put_item(TableName=TABLE, Item={"pk": {"S": f"{run}#hot"}, "sk": {"S": f"counter{n}"},
                                                   "held": {"N": "0"}})
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    start_at = time.time() + 3.0  # every client process imported and connected before the clock starts
    procs = [ctx.Process(target=_client_loop, args=(endpoint, items, run, start_at, seconds, queue), daemon=True)
             for _ in range(max(1, clients))]
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=seconds + 60) for _ in procs]
    for proc in procs:
        proc.join(10)
    done = sum(r[0] for r in results)
    return {"clients": len(procs), "seconds": seconds, "transactions": done, "failed": sum(r[1] for r in results),
            "per_second": round(done / seconds, 1), "shape": [i["op"] for i in items]}
