"""Bookings written before the event's booking index (issue 18) get their index entries from a
backfill: paged, idempotent, resumable, and it prints its progress."""
from __future__ import annotations

import boto3

from holdfast.tools import cli
from holdfast.adapters.cancellation_store import EVENT_INDEX_SHARDS
from holdfast.tools.event_index_backfill import backfill
from holdfast.schemas import BookingIn

TABLE = "unit-bookings"


def _old_bookings(bookings, event, n):
    """n bookings whose index entries are gone, as if written before the index existed."""
    client = boto3.client("dynamodb", region_name="eu-central-1")
    made = [bookings.create_booking(event["event_id"], f"c{i}", f"k{i}", BookingIn(quantity=1)).booking.booking_id
            for i in range(n)]
    for shard in range(EVENT_INDEX_SHARDS):
        pk = f"EVENTBOOKINGS#{event['event_id']}#{shard}"
        for item in client.query(TableName=TABLE, KeyConditionExpression="pk = :pk",
                                 ExpressionAttributeValues={":pk": {"S": pk}})["Items"]:
            client.delete_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]})
    return client, made


def test_backfill_writes_each_missing_entry_once_and_resumes(bookings, catalog, store):
    from tests.unit.conftest import event_request

    event = catalog.create_event(event_request(capacity=10, max_per_booking=1, max_holds_per_customer=1))
    client, made = _old_bookings(bookings, event, 5)
    assert store.event_booking_ids(event["event_id"]) == []
    seen = []
    first = backfill(client, TABLE, page_size=3, report=seen.append, max_pages=1)   # stopped after a page
    assert first.next_start is not None and first.pages == 1
    done = backfill(client, TABLE, page_size=3, start=first.next_start, report=seen.append)
    assert done.next_start is None
    assert sorted(store.event_booking_ids(event["event_id"])) == sorted(made)
    assert first.written + done.written == 5 and first.present + done.present == 0
    again = backfill(client, TABLE, page_size=3)                                      # idempotent
    assert again.written == 0 and again.present == 5 and again.bookings == 5
    assert sorted(store.event_booking_ids(event["event_id"])) == sorted(made)
    # Entries the hold wrote itself are left alone (counted as present, not written twice).
    newer = bookings.create_booking(event["event_id"], "late", "kl", BookingIn(quantity=1)).booking.booking_id
    assert backfill(client, TABLE).present == 6 and newer in store.event_booking_ids(event["event_id"])


def test_the_command_prints_its_progress_page_by_page(bookings, catalog, capsys):
    from tests.unit.conftest import event_request

    event = catalog.create_event(event_request(capacity=10, max_per_booking=1, max_holds_per_customer=1))
    _old_bookings(bookings, event, 3)
    assert cli.main(["backfill-event-index", "--table", TABLE, "--endpoint", "", "--page-size", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("page 1: ") and "resume with --start" in out[0]
    assert out[-2].endswith("; done") and out[-1] == "3 index entries written, 0 already present, 3 bookings seen"


def test_backfill_gives_an_entry_without_its_placing_time_the_bookings_created_at(bookings, catalog, store):
    """An entry written before the index carried ``placed_at`` (the operator's sales page's order)
    is given the booking's ``created_at`` once; a new one is written with it."""
    from tests.unit.conftest import event_request

    event = catalog.create_event(event_request(capacity=10, max_per_booking=1, max_holds_per_customer=1))
    client, [gone] = _old_bookings(bookings, event, 1)   # no entry at all
    kept = bookings.create_booking(event["event_id"], "c9", "k9", BookingIn(quantity=1)).booking
    assert store.event_booking_times(event["event_id"]) == [(kept.created_at, kept.booking_id)]
    for shard in range(EVENT_INDEX_SHARDS):   # an entry without its time
        pk = f"EVENTBOOKINGS#{event['event_id']}#{shard}"
        for item in client.query(TableName=TABLE, KeyConditionExpression="pk = :pk",
                                 ExpressionAttributeValues={":pk": {"S": pk}})["Items"]:
            client.update_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]}, UpdateExpression="REMOVE placed_at")
    assert store.event_booking_times(event["event_id"]) == [("", kept.booking_id)]
    done = backfill(client, TABLE)
    assert (done.written, done.present, done.timed) == (1, 1, 1)
    made = bookings.store.get_booking(gone)
    assert sorted(store.event_booking_times(event["event_id"])) == sorted(
        [(kept.created_at, kept.booking_id), (made.created_at, gone)])
    assert backfill(client, TABLE).timed == 0


def test_backfill_lists_a_confirmed_bookings_entry_among_its_offerings_sales(bookings, catalog, store, payments,
                                                                              provider):
    """A booking confirmed before the confirming write listed its index entry among the offering's
    sales (gsi1) is missing from the operator's sales page until the backfill lists it, once; an
    unpaid hold is not listed."""
    from holdfast.domain.organizers import Caller
    from holdfast.services.exports import ExportService
    from tests.unit.conftest import event_request

    owner = Caller("org-1", "key-1")
    event = catalog.create_event(event_request(capacity=10, max_per_booking=1), None, owner)
    paid = bookings.create_booking(event["event_id"], "c1", "k1", BookingIn(quantity=1)).booking
    payment_id = payments.start_payment(paid.booking_id, "c1", "p1").payment.payment_id
    provider.pay(payment_id)
    payments.apply_provider_payment(provider.get_payment(payment_id))
    bookings.create_booking(event["event_id"], "c2", "k2", BookingIn(quantity=1))   # held only
    client = boto3.client("dynamodb", region_name="eu-central-1")
    for shard in range(EVENT_INDEX_SHARDS):   # as an entry written before sales were listed
        pk = f"EVENTBOOKINGS#{event['event_id']}#{shard}"
        for item in client.query(TableName=TABLE, KeyConditionExpression="pk = :pk",
                                 ExpressionAttributeValues={":pk": {"S": pk}})["Items"]:
            client.update_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]},
                               UpdateExpression="REMOVE gsi1pk, gsi1sk")
    assert ExportService(store).sales_of(owner, event["event_id"])["sales"] == []
    assert backfill(client, TABLE).sold == 1
    assert [sale["booking_id"] for sale in ExportService(store).sales_of(owner, event["event_id"])["sales"]] == [
        paid.booking_id]
    assert backfill(client, TABLE).sold == 0
