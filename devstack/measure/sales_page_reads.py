"""What one page of the operator's sales page (GET /admin/sales/{offering_id}) reads of its
offering's booking index, on moto's DynamoDB with the local stack's transactions (issue 43's
leftover: the page used to read the whole index).

Makes one offering with `--holds` holds never paid and `--sales` paid ones (placed a second apart),
then reads one page of `--limit` and counts the index entries the page's queries return (the
booking index, EVENTBOOKINGS#, and the sales index on gsi1, SOLD#), the queries, and the read
units DynamoDB would charge for them (each query's items rounded up to 4 KB: 1 unit strongly
consistent, 0.5 eventually consistent on the index), the items' size taken from their JSON.

    PYTHONPATH=.:layers/holdfast .venv/bin/python -m devstack.measure.sales_page_reads --holds 2000 --sales 60
    PYTHONPATH=.:layers/holdfast .venv/bin/python -m devstack.measure.sales_page_reads --holds 0 --sales 1000
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random


def measure(holds: int, sales: int, limit: int) -> dict[str, float]:
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")
    import boto3
    from moto import mock_aws

    from devstack.aws import transactions
    from holdfast.adapters.dynamo import BookingStore
    from holdfast.domain.organizers import Caller
    from holdfast.schemas import BookingIn
    from holdfast.services.bookings import BookingService
    from holdfast.services.catalog import CatalogService
    from holdfast.services.exports import ExportService
    from holdfast.services.payments import PaymentService
    from tests.support.fake_provider import FakeProvider
    from tests.support.template import create_bookings_table
    from tests.unit.conftest import ManualClock, event_request

    transactions.install()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-central-1")
        create_bookings_table(client, "measure")
        store = BookingStore("measure", client)
        clock = ManualClock()
        bookings = BookingService(store, clock, lambda *_: None, rng=random.Random(1))
        provider = FakeProvider(clock)
        payments = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done")
        owner = Caller("org-measure", "key_measure")
        event = CatalogService(store, clock, 600, id_salt="measure").create_event(
            event_request(capacity=holds + sales, max_holds_per_customer=5), None, owner)["event_id"]
        for n in range(holds):
            bookings.create_booking(event, f"h{n}", f"h{n}", BookingIn(quantity=1))
        for n in range(sales):
            clock.advance(1)
            booking = bookings.create_booking(event, f"s{n}", f"s{n}", BookingIn(quantity=1)).booking
            payment_id = payments.start_payment(booking.booking_id, f"s{n}", f"p{n}").payment.payment_id
            provider.pay(payment_id)
            payments.apply_provider_payment(provider.get_payment(payment_id))
        counts = {"entries": 0, "queries": 0, "read_units": 0.0}
        query = client.query

        def counted(**request):
            answer = query(**request)
            partition = str(request.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S", ""))
            if partition.startswith(("EVENTBOOKINGS#", "SOLD#")):
                items = answer.get("Items", [])
                counts["entries"] += len(items)
                counts["queries"] += 1
                size = len(json.dumps(items))
                counts["read_units"] += max(1, math.ceil(size / 4096)) * (0.5 if request.get("IndexName") else 1)
            return answer

        client.query = counted
        page = ExportService(store).sales_of(owner, event, limit=limit)
        return {"holds": holds, "sales": sales, "shown": len(page["sales"]), **counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--holds", type=int, default=2000)
    parser.add_argument("--sales", type=int, default=60)
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    found = measure(args.holds, args.sales, args.limit)
    print(f"{found['holds']} unpaid holds, {found['sales']} sales: a page of {found['shown']} read "
          f"{found['entries']} index entries in {found['queries']} queries, about {found['read_units']:.1f} read units")


if __name__ == "__main__":
    main()
