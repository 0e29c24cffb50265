"""What one held booking's notification costs the machine: the notifier's handler on SQS batches of
``booking.held`` changes, against a DynamoDB Local of its own, as CPU per message of this process
(the handler, botocore, the renderer) plus DynamoDB Local's. First deliveries, then the same
batches again (the queue's redelivery: nothing may be sent twice).

    .venv/bin/python -m devstack.measure.bench_notifier                     # this tree
    .venv/bin/python -m devstack.measure.bench_notifier --tree /tmp/old     # another tree (git archive <commit>)

``make bench``'s CPU per new hold moves with whatever else the machine runs (its 429 answers are
spread over the holds that got through); this counts CPU per message only, so two trees compare
on a busy machine. No sender is configured (the bench's customers have no address): each message
is recorded, as in ``make bench``. Local only: the tree's code runs as it is, against its own table.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from devstack.sample_events import days_ahead

REPO = Path(__file__).resolve().parents[2]


def _seed(client: Any, table: str, tree: Path, bookings: int) -> tuple[str, list[dict[str, Any]]]:
    sys.path.insert(0, str(tree / "layers" / "holdfast"))
    from holdfast.adapters.booking_items import booking_item
    from holdfast.adapters.codec import _attrs
    from holdfast.domain.booking import Booking, PaymentMode
    from holdfast.domain.inventory import Places
    from holdfast.domain.money import Money
    from holdfast.domain.statuses import BookingStatus

    event_id = str(uuid.uuid4())
    client.put_item(TableName=table, Item=_attrs({
        "pk": f"EVENT#{event_id}", "sk": "META", "event_id": event_id, "name": "Bench night", "venue": "Bench hall",
        "city": "Moscow", "starts_at": days_ahead(60), "inventory_kind": "counted"}))
    details = []
    for n in range(bookings):
        booking = Booking(booking_id=str(uuid.uuid4()), event_id=event_id, customer_id=f"bench-c{n}",
                          status=BookingStatus.HELD, places=Places(kind="counted", quantity=1, pools=(("p0", 1),)),
                          amount=Money.parse("1000.00", "RUB"), payment_mode=PaymentMode.ONE_STAGE,
                          hold_expires_at=days_ahead(30, hour=10), created_at=days_ahead(30, hour=9),
                          updated_at=days_ahead(30, hour=9), version=1, counted_hold=True)
        client.put_item(TableName=table, Item=_attrs(booking_item(booking)))
        details.append({"type": "booking.held", "booking_id": booking.booking_id, "event_id": event_id,
                        "customer_id": booking.customer_id, "status": "HELD", "version": 1,
                        "at": booking.created_at, "hold_expires_at": booking.hold_expires_at})
    return event_id, details


def _batches(details: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    records = [{"messageId": uuid.uuid4().hex, "receiptHandle": "r", "attributes": {}, "messageAttributes": {},
                "body": json.dumps({"detail-type": d["type"], "source": "holdfast.bookings", "detail": d}),
                "eventSource": "aws:sqs"} for d in details]
    return [{"Records": records[i:i + size]} for i in range(0, len(records), size)]


def measure(tree: Path, messages: int, batch: int) -> dict[str, Any]:
    import boto3

    from devstack.dynamodb_local import DynamoDBLocal
    from devstack.measure.sampler import process_cpu

    ddb = DynamoDBLocal().start()
    try:
        table = "bench-notifier"
        os.environ.update({"AWS_DEFAULT_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "local",
                           "AWS_SECRET_ACCESS_KEY": "local", "AWS_ENDPOINT_URL_DYNAMODB": ddb.endpoint,
                           "BOOKINGS_TABLE_NAME": table, "POWERTOOLS_TRACE_DISABLED": "true",
                           "POWERTOOLS_LOG_LEVEL": "WARNING", "POWERTOOLS_METRICS_NAMESPACE": "bench",
                           "HOLDFAST_DEPLOYMENT": "local"})
        client = boto3.client("dynamodb", endpoint_url=ddb.endpoint)
        client.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}])
        _, details = _seed(client, table, tree, 2 * messages)
        spec = importlib.util.spec_from_file_location("bench_notifier_app", tree / "functions" / "notifier" / "app.py")
        app = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(app)   # type: ignore[union-attr]

        class Context:
            function_name, memory_limit_in_mb, aws_request_id = "notifier", 512, "bench"
            invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:notifier"

        def run(batches: list[dict[str, Any]]) -> dict[str, float]:
            c0, d0 = time.process_time(), process_cpu([ddb.pid])[ddb.pid]
            for event in batches:
                assert app.lambda_handler(event, Context()) == {"batchItemFailures": []}
            count = sum(len(b["Records"]) for b in batches)
            here, server = time.process_time() - c0, process_cpu([ddb.pid])[ddb.pid] - d0
            return {"notifier_ms": round(here * 1000 / count, 2), "dynamodb_local_ms": round(server * 1000 / count, 2),
                    "total_ms": round((here + server) * 1000 / count, 2)}

        import holdfast

        assert Path(holdfast.__file__).resolve().is_relative_to(tree), holdfast.__file__   # the tree's own code
        run(_batches(details[messages:], batch))   # warm: imports, templates, DynamoDB Local's JIT
        batches = _batches(details[:messages], batch)
        first = run(batches)
        again = run(batches)
        recorded = sum(1 for d in details[:messages]
                       if "Item" in client.get_item(TableName=table, Key={"pk": {"S": f"CUSTOMER#{d['customer_id']}"},
                                                                          "sk": {"S": "NOTE#" + d["booking_id"] + "#000001"}}))
        return {"tree": str(tree), "messages": messages, "batch": batch, "first_delivery": first,
                "redelivery": again, "recorded_once": recorded == messages}
    finally:
        ddb.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=str(REPO), help="the source tree whose notifier runs")
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--batch", type=int, default=10, help="messages per SQS batch (the template's BatchSize)")
    args = parser.parse_args(argv)
    print(json.dumps(measure(Path(args.tree).resolve(), args.messages, args.batch), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
