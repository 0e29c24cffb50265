"""The bench's yardstick: how many DynamoDB Local transactions of a hold's shape this machine runs.

`make bench` reports holds per second as a ratio to this rate, measured in the same run against
the same DynamoDB Local, from as many client processes as the hold function has workers: the
ratio is the engine's overhead (HTTP, API Gateway and Lambda stand-ins, handler, its other calls,
the rest of the sale's traffic), which compares from machine to machine where absolute rates do not.

The transaction is a real hold's, item for item: the TransactWriteItems request a worker of the
hold route made (devstack/aws/workers.py keeps one per route), sent again with the same
operations, expressions, conditions and item bodies, into a table of its own. Only the keys
change, as they do from hold to hold:

* the pool counter update goes to one of as many seeded counters as the bench's event has pools
  (`hot_items`, chosen at random as a hold chooses its pool), with its own condition
  (`available >= :n`) always true;
* the sale-gate `ConditionCheck` goes to one of the 32 seeded gate shards (`attribute_not_exists`
  of the cancellation mark: true);
* every other item (idempotency record, booking, journal, outbox, markers, expiry entry, the
  customer's hold counter) gets a fresh key, as a new booking's records do.

What the figure includes: each client's botocore work (build, serialise, sign, HTTP on a kept-alive
connection, parse) and DynamoDB Local's; nothing else runs in those processes. A cancelled or
conflicting transaction is counted apart (`failed`), not in the rate. The clock starts when every
client process has started (importing boto3 in 16 processes takes many seconds on a loaded 2-core
machine; a fixed start once left some clients no time at all) and has sent for `WARM_UP_SECONDS`
more (DynamoDB Local's JIT for transactions).
"""
from __future__ import annotations

import copy
import multiprocessing
import random
import time
import uuid
from typing import Any, Callable

TABLE = "bench-bare-transactions"
GATE_SHARDS = 32
WARM_UP_SECONDS = 3.0
#: the default shape when no hold was sampled: a pool update, the records, a gate check
DEFAULT_SAMPLE = {"TransactItems": [
    {"Update": {"TableName": "t", "Key": {"pk": {"S": "INV#e#p0"}, "sk": {"S": "p0"}},
                "UpdateExpression": "SET #src = #src - :n, #dst = #dst + :n", "ConditionExpression": "#src >= :n",
                "ExpressionAttributeNames": {"#src": "available", "#dst": "held"},
                "ExpressionAttributeValues": {":n": {"N": "1"}}}},
    *({"Put": {"TableName": "t", "Item": {"pk": {"S": f"R{n}"}, "sk": {"S": "x"}, "body": {"S": "x" * 300}},
               "ConditionExpression": "attribute_not_exists(pk)"}} for n in range(6)),
    {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "GATE#e#00"}, "sk": {"S": "GATE"}},
                        "ConditionExpression": "attribute_not_exists(cancelled_at)"}}]}


def _role(op: str, body: dict[str, Any]) -> str:
    key = body.get("Key") or body.get("Item") or {}
    pk = key.get("pk", {}).get("S", "")
    if op == "Update" and pk.startswith("INV#"):
        return "pool"
    if op == "ConditionCheck" and pk.startswith("GATE#"):
        return "gate"
    return "fresh"


def shape(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """The sample's items: [{"op", "role" (pool/gate/fresh), "body" (the request item), "bytes"}]."""
    items = []
    for item in sample.get("TransactItems") or []:
        for op, body in item.items():
            items.append({"op": op, "role": _role(op, body), "body": body,
                          "bytes": len(repr(body.get("Item") or body.get("ExpressionAttributeValues") or {}))})
    return items


def _client(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="eu-central-1",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1, "mode": "standard"}, max_pool_connections=4))


def _hot_key(run: str, role: str, n: int) -> dict[str, Any]:
    return {"pk": {"S": f"{run}#{role}#{n}"}, "sk": {"S": role}}


def _transaction(items: list[dict[str, Any]], run: str, hot_items: int, rng: Any = random) -> list[dict[str, Any]]:
    # an order's transaction updates a pool and checks a gate per line: distinct keys, as a transaction
    # names an item once (hot_items is at least the number of pool updates, ``_seed``)
    pools = iter(rng.sample(range(_hot_count(items, hot_items)), sum(i["role"] == "pool" for i in items)))
    gates = iter(rng.sample(range(GATE_SHARDS), min(GATE_SHARDS, sum(i["role"] == "gate" for i in items))))
    request = []
    for item in items:
        body = copy.deepcopy(item["body"])
        body["TableName"] = TABLE
        if item["role"] == "pool":
            body["Key"] = _hot_key(run, "pool", next(pools))
        elif item["role"] == "gate":
            body["Key"] = _hot_key(run, "gate", next(gates))
        else:
            where = "Item" if "Item" in body else "Key"
            body[where]["pk"] = {"S": f"{run}#{uuid.uuid4()}"}
        request.append({item["op"]: body})
    return request


def _hot_count(items: list[dict[str, Any]], hot_items: int) -> int:
    """How many pool counters a run seeds: the offering's pools, and never fewer than one
    transaction's pool updates."""
    return max(1, hot_items, sum(item["role"] == "pool" for item in items))


def _seed(client: Any, items: list[dict[str, Any]], run: str, hot_items: int) -> None:
    """The pool counters (every attribute the update names, large) and the gate shards."""
    names: set[str] = set()
    for item in items:
        if item["role"] == "pool":
            names |= set((item["body"].get("ExpressionAttributeNames") or {}).values())
    for n in range(_hot_count(items, hot_items)):
        client.put_item(TableName=TABLE, Item={**_hot_key(run, "pool", n), **{a: {"N": str(10 ** 9)} for a in names}})
    for n in range(GATE_SHARDS):
        client.put_item(TableName=TABLE, Item=_hot_key(run, "gate", n))


def prepare(client: Any, items: list[dict[str, Any]], hot_items: int) -> str:
    """The bare table (made once) and a run's seeded counters and gate shards; the run's key prefix."""
    try:
        client.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}])
    except client.exceptions.ResourceInUseException:
        pass
    run = uuid.uuid4().hex[:8]
    _seed(client, items, run, hot_items)
    return run


def _client_loop(endpoint: str, items: list[dict[str, Any]], run: str, hot_items: int, seconds: float,
                 ready: Any, go: Any, queue: Any) -> None:
    client = _client(endpoint)
    ready.put(1)
    while not go.is_set():  # warming up (DynamoDB Local's JIT, the connection) until all are: not counted
        try:
            client.transact_write_items(TransactItems=_transaction(items, run, hot_items))
        except Exception:  # noqa: BLE001 - the warm-up only
            time.sleep(0.01)
    done = failed = 0
    cpu0 = time.process_time()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            client.transact_write_items(TransactItems=_transaction(items, run, hot_items))
            done += 1
        except Exception:  # noqa: BLE001 - counted apart: a conflict on a shared counter
            failed += 1
    queue.put((done, failed, time.process_time() - cpu0))


def measure(endpoint: str, sample: dict[str, Any] | None, clients: int, seconds: float = 10.0,
            hot_items: int = 20, server_cpu: Callable[[], float | None] | None = None) -> dict[str, Any]:
    """Transactions per second of the sample's shape from `clients` processes for `seconds`.

    With ``server_cpu`` (DynamoDB Local's CPU seconds so far, None when its process is not known),
    also what a transaction costs the machine: the server's CPU over the counted seconds and the
    clients' own, per transaction."""
    items = shape(sample or DEFAULT_SAMPLE)
    run = prepare(_client(endpoint), items, hot_items)
    ctx = multiprocessing.get_context("spawn")
    ready, go, queue = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_client_loop, args=(endpoint, items, run, hot_items, seconds, ready, go, queue),
                         daemon=True) for _ in range(max(1, clients))]
    for proc in procs:
        proc.start()
    for _ in procs:  # each imported boto3 and made its client (seconds each on a loaded machine)
        ready.get(timeout=180)
    time.sleep(WARM_UP_SECONDS)
    server0 = server_cpu() if server_cpu else None
    go.set()  # every client counts for the same `seconds` from here
    results = [queue.get(timeout=seconds + 60) for _ in procs]
    server1 = server_cpu() if server0 is not None else None
    server_s = server1 - server0 if server0 is not None and server1 is not None else None
    for proc in procs:
        proc.join(10)
    done = sum(r[0] for r in results)
    answer = {"clients": len(procs), "seconds": seconds, "transactions": done, "failed": sum(r[1] for r in results),
              "per_second": round(done / seconds, 1), "hot_items": hot_items,
              "shape": [f"{i['op']}({i['role']})" if i["role"] != "fresh" else i["op"] for i in items]}
    if server_s is not None and done:
        clients_s = sum(r[2] for r in results)
        answer["cpu_ms_per_transaction"] = {"DynamoDB Local": round(server_s * 1000 / done, 2),
                                            "clients": round(clients_s * 1000 / done, 2),
                                            "total": round((server_s + clients_s) * 1000 / done, 2)}
    return answer
