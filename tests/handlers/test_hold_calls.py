"""The AWS calls of a hold on its real request path (functions/bookings_api over moto), counted by
wrapping botocore's one entry point for every API call. Issue 15: a hold makes at most the
transaction, one read and the calls that schedule its expiry (issue 35: at most two, and only the
first hold of a bucket in a container); a sold-out answer writes nothing and
reads at most once. A call added to either path fails here."""
from __future__ import annotations

import json
import threading
import uuid
from collections import Counter

import pytest

from devstack.sample_events import moved
from tests.support.handlers import api_event, call

ORGANIZER = {"X-Api-Key": "organizer-test-key"}
READS = {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"}
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


@pytest.fixture
def counted(handler_env, monkeypatch):
    from botocore.client import BaseClient

    calls: list[str] = []
    original = BaseClient._make_api_call
    handler_thread = threading.get_ident()  # the handler runs in the test's thread

    def counting(client, operation, params):
        # only the request path's own calls: an execution another test started (moto runs Step
        # Functions on threads of its own) may wake and invoke its Lambda task in the meantime
        if threading.get_ident() == handler_thread:
            calls.append(operation)
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", counting)
    return calls


def create_event(capacity):
    body = json.loads(api_event("create_event.json")["body"]) | {"capacity": capacity}
    status, created = call("events_api", api_event("create_event.json", headers=ORGANIZER | {
        "Idempotency-Key": "calls-" + uuid.uuid4().hex}, body=body))
    assert status == 201, created
    return created["event_id"]


def hold(event_id, customer, calls):
    calls.clear()
    status, answer = call("bookings_api", api_event("create_booking.json", path_params={"event_id": event_id},
                                                      headers={"X-Customer-Id": customer,
                                                               "Idempotency-Key": "k-" + uuid.uuid4().hex},
                                                      body={"quantity": 1}))
    return status, answer, Counter(calls)


def test_a_hold_makes_at_most_a_read_the_transaction_and_the_ticks_of_a_new_bucket(counted):
    """Since the expiry ticks are the platform's (issue 35), a hold needs two: its bucket's, which
    expires it, and the one a reminder window earlier, which reminds it. A container starts each
    once, so only the first hold of a bucket in a container calls Step Functions, at most twice
    (a container busy for longer than the reminder window started the earlier one already, as an
    expiry tick); every other hold of the bucket calls it not at all."""
    from holdfast.adapters.expiry_buckets import bucket_of

    event_id = create_event(capacity=100)
    status, _, _ = hold(event_id, "warm-up", counted)     # a new container reads the offering once
    assert status == 201
    buckets, started = set(), 0
    for n in range(3):
        status, answer, calls = hold(event_id, f"customer-{n}", counted)
        assert status == 201, answer
        assert calls["TransactWriteItems"] == 1, calls
        assert sum(calls[op] for op in READS) <= 1, calls
        assert calls["StartExecution"] <= 2, calls
        assert sum(calls.values()) <= 4, f"a hold made {dict(calls)}"
        assert set(calls) <= {"TransactWriteItems", "BatchGetItem", "StartExecution"}, calls
        buckets.add(bucket_of(answer["hold_expires_at"]))
        started += calls["StartExecution"]
    assert started <= 2 * len(buckets), (started, buckets)   # at most the ticks of the buckets it met


def test_a_sold_out_answer_writes_nothing_and_reads_at_most_once(counted):
    event_id = create_event(capacity=1)
    assert hold(event_id, "first", counted)[0] == 201
    for n in range(3):
        status, answer, calls = hold(event_id, f"late-{n}", counted)
        assert status == 409 and answer["error"]["code"] == "sold_out", answer
        assert not set(calls) & WRITES, f"a sold-out answer wrote: {dict(calls)}"
        assert sum(calls[op] for op in READS) <= 1 and sum(calls.values()) <= 1, f"a sold-out answer made {dict(calls)}"


def test_a_signed_in_customers_hold_writes_nothing_for_the_mail_policy_and_says_the_address_is_theirs(counted):
    """Issue 35: the first hold of a signed-in customer in a container wrote their address's
    standing (a CONTACT# PutItem) before the transaction. The booking and its outbox event now
    carry it (``contact_own``), and the notifier's policy reads it there."""
    from holdfast import wiring

    event_id = create_event(capacity=100)
    assert hold(event_id, "warm-up", counted)[0] == 201
    for n, given in enumerate((None, "Own@Example.org", "someone-else@example.org")):
        counted.clear()
        status, answer = call("bookings_api", api_event(
            "create_booking.json", path_params={"event_id": event_id},
            headers={"X-Customer-Id": f"signed-in-{n}", "X-Customer-Email": "own@example.org",
                     "Idempotency-Key": "k-" + uuid.uuid4().hex},
            body={"quantity": 1} | ({"contact_email": given} if given else {})))
        assert status == 201, answer
        calls = Counter(counted)
        if given == "someone-else@example.org":
            # an address not the customer's own is checked against their caps (issue 42, finding
            # 10): its standing read, their waiting addresses counted, the day's new one counted
            assert (calls["GetItem"], calls["Query"], calls["UpdateItem"]) == (1, 1, 1), calls
            calls -= Counter({"GetItem": 1, "Query": 1, "UpdateItem": 1})
        assert set(calls) <= {"TransactWriteItems", "BatchGetItem", "StartExecution"}, calls
        assert calls["TransactWriteItems"] == 1 and sum(calls.values()) <= 3, calls
        booking = wiring.store().get_booking(answer["booking_id"])
        outbox = wiring.store().db._get(f"BOOKING#{booking.booking_id}", "OUTBOX#000001")
        own = given != "someone-else@example.org"
        assert booking.contact_email.lower() == (given or "own@example.org").lower()
        assert booking.contact_own is own and outbox.get("contact_own", False) is own, outbox
        assert outbox["contact_email"] == booking.contact_email


def test_a_warm_container_reads_the_offering_again_only_once_after_its_start_moved(counted, monkeypatch):
    """Issue 42, finding 3: the hold path keeps the offering for the container's life. A PATCH of
    its start moves the sale gate's terms version, which the hold's transaction checks: the first
    hold after it has its transaction refused, reads the offering once (consistently) and commits;
    every hold before and after is the same read-at-most-once and one transaction, with no read of
    the offering's item by the hold itself (the waiting room's own cache of whether the event is
    high-demand may read it when its minute runs out: not counted). Printed with ``-s``."""
    offering_reads = []
    from botocore.client import BaseClient

    counting = BaseClient._make_api_call

    def noting(client, operation, params):
        if operation == "GetItem" and params.get("ConsistentRead"):
            offering_reads.append(params["Key"]["pk"]["S"])
        return counting(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", noting)
    event_id = create_event(capacity=100)
    assert hold(event_id, "warm-up", counted)[0] == 201
    offering_reads.clear()
    status, _, before = hold(event_id, "before", counted)
    assert status == 201 and not offering_reads and before["TransactWriteItems"] == 1, before
    edited = call("events_api", api_event("update_event.json", path_params={"event_id": event_id},
                                          headers=ORGANIZER, body={"starts_at": moved("2030-05-02T20:00:00Z")}))
    assert edited[0] == 200, edited
    offering_reads.clear()
    status, answer, first = hold(event_id, "first-after", counted)
    assert status == 201, answer
    assert offering_reads == [f"EVENT#{event_id}"] and first["TransactWriteItems"] == 2, first   # refused, read, committed
    status, _, after = hold(event_id, "after", counted)
    assert status == 201 and len(offering_reads) == 1 and after["TransactWriteItems"] == 1, after
    assert sum(after[op] for op in READS - {"GetItem"}) <= 1, after
    print(f"\nhold calls: before {dict(before)}; first after PATCH {dict(first)}; after {dict(after)}")


def test_an_order_of_three_lines_plans_on_the_containers_snapshots(counted):
    """Issue 49: an order's lines plan as a single hold does, on this container's availability
    snapshots (services/hold_reads.py), and its idempotency record is read only when the order is
    refused, so a warm container's order makes its one transaction: no pool read per line, no read
    of the record. A repeat is still answered from its first result."""
    events = [create_event(capacity=100) for _ in range(3)]

    def order(customer):
        counted.clear()
        event = api_event("create_booking.json", headers={"X-Customer-Id": customer,
                                                          "Idempotency-Key": "o-" + uuid.uuid4().hex},
                          body={"lines": [{"event_id": event_id, "quantity": 1} for event_id in events]})
        event.update(resource="/orders", path="/orders", pathParameters=None)
        status, answer = call("bookings_api", event)
        return status, answer, Counter(counted)

    status, _, first = order("warm-up")          # a new container reads each line's pools once
    assert status == 201 and first["BatchGetItem"] == 3, first
    for n in range(3):
        status, answer, calls = order(f"buyer-{n}")
        assert status == 201, answer
        assert calls["TransactWriteItems"] == 1 and sum(calls[op] for op in READS) == 0, calls
        assert set(calls) <= {"TransactWriteItems", "StartExecution"}, calls
