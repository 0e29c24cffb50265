"""Requests whose keys DynamoDB refuses (finding 6 of issue 11), on DynamoDB Local, which (unlike
moto) checks key sizes on reads and start keys against the query range: the old code let its
ValidationException through as a 500 for an oversized seat id and an out-of-range cursor.
Each must now be a 400 with a code, decided before the store is asked (or, for seat ids, by the
store skipping keys that cannot exist).

An oversized listing partition key was NOT refused by DynamoDB Local on Query (it answered an
empty page, as moto does); the 400 for it is the API's own contract, and on writes (publishing
such an event) moto does refuse it: see tests/handlers/test_bad_input_holes.py."""
from __future__ import annotations

import base64
import json
import uuid

import pytest

from holdfast.adapters.dynamo import BookingStore
from holdfast.domain.errors import InvalidRequest
from holdfast.schemas import BookingIn, EventListQuery
from holdfast.services.bookings import BookingService
from holdfast.services.catalog import CatalogService
from holdfast.services.listing import ListingService
from tests.support.template import create_bookings_table

from .conftest import make_client
from .helpers import ManualClock, event_request

EXPANDS = "\ufdfa"


@pytest.fixture
def local_store(dynamodb_local_endpoint):
    client = make_client(dynamodb_local_endpoint)
    table = f"keys-{uuid.uuid4().hex[:12]}"
    create_bookings_table(client, table)
    client.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    try:
        yield BookingStore(table, client)
    finally:
        client.delete_table(TableName=table)


@pytest.mark.parametrize("query", [{"city": EXPANDS * 100}, {"category": EXPANDS * 50}, {"q": "\u3300" * 200}])
def test_filters_past_the_key_limit(local_store, query):
    with pytest.raises(InvalidRequest) as err:
        ListingService(local_store, ManualClock()).list_events(EventListQuery.model_validate(query).search())
    assert err.value.code == "query_too_long"


def test_cursor_outside_the_range(local_store):
    cursor = base64.urlsafe_b64encode(json.dumps({"p": "LIST#ALL", "s": "0000#x"}).encode()).decode()
    query = EventListQuery.model_validate({"cursor": cursor}).search()
    with pytest.raises(InvalidRequest) as err:
        ListingService(local_store, ManualClock()).list_events(query)
    assert err.value.code == "invalid_cursor"


def test_seat_ids_too_long_for_a_key_are_unknown_seats(local_store):
    clock = ManualClock()
    event = CatalogService(local_store, clock, 600, id_salt="tests-deployment-salt").create_event(
        event_request(capacity=None, seat_map={"rows": [{"name": "A", "seats": 3}]}))
    long_seat = "A-" + "1" * 1100
    assert local_store.read_units(event["event_id"], ["A-1", long_seat]).keys() == {"A-1"}
    # Past the schema (a waitlist offer or a future caller builds its own request): still a 400.
    request = BookingIn.model_construct(quantity=None, seats=["A-1", long_seat], best_available=False,
                                        contact_email=None)
    with pytest.raises(InvalidRequest) as err:
        BookingService(local_store, clock).create_booking(event["event_id"], "alice", "k", request)
    assert err.value.code == "unknown_seats"
