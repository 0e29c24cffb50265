"""A burst of arrivals at a high-demand sale, over HTTP on loopback against the local stack.

Customers arrive once, and impatient ones send four joins at the same moment, all fired at once
by 64 clients. Every answer must be a queue position or a 429 with Retry-After, never a 5xx.
Then the head of the queue follows the protocol (poll, and book with the token once admitted)
while customers further back try to skip the queue. The table is read afterwards: every booking
belongs to a customer the waiting room admitted, and no place is sold twice.

Sizes: ``make proof`` (``HOLDFAST_BURST_SCALE=full``) sends 2,400 customers once and 150 four
times: 3,000 joins. The default run sends 160 and 10 (200 joins) through the same code and the
same 64 clients, so joins still overlap and impatient ones are still limited: the local stack runs
one invocation at a time (about 35 a second), so the full size spends 90 s on throughput alone.

The template's defaults apply except the per-customer queue limit, which the integration stack
tightens (conftest) so that four joins at once from one customer are limited. Bounded: at most
3,000 joins, a few hundred polls and bookings, deadlines on every phase.
"""
from __future__ import annotations

import os
import random
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.integration

FULL = os.environ.get("HOLDFAST_BURST_SCALE") == "full"
CAPACITY = 25 if FULL else 10
PATIENT, IMPATIENT, REPEATS = (2400, 150, 4) if FULL else (160, 10, 4)
ARRIVALS = PATIENT + IMPATIENT * REPEATS
CLIENTS = 64
HEAD = 2 * CAPACITY + 10     # customers at the front who follow the protocol to the end
STRAGGLERS = 120 if FULL else 30   # customers further back who poll once and try to skip the queue


def scan(system, **request):
    stack = system["stack"]
    dynamodb = stack.boto3_client("dynamodb")
    items, start = [], None
    while True:
        page = dynamodb.scan(TableName=stack.resources["BookingsTable"], ConsistentRead=True, **request,
                             **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def test_burst_of_arrivals(api, system):
    event_id = api.create_event(capacity=CAPACITY, high_demand=True)["event_id"]
    tag = uuid.uuid4().hex[:6]
    patient = [f"burst-{tag}-p{n}" for n in range(PATIENT)]
    impatient = [f"burst-{tag}-i{n}" for n in range(IMPATIENT)]
    blocks = [[c] for c in patient] + [[c] * REPEATS for c in impatient]
    random.Random(7).shuffle(blocks)
    arrivals = [c for block in blocks for c in block]  # an impatient customer's joins go out together
    assert len(arrivals) == ARRIVALS

    lock = threading.Lock()
    statuses: Counter = Counter()
    numbers: dict[str, set[int]] = {}
    wrong: list[str] = []

    def arrive(customer: str) -> None:
        answer = api.request("POST", f"/events/{event_id}/queue", customer=customer)
        with lock:
            statuses[answer.status_code] += 1
            if answer.status_code == 200:
                view = answer.json()
                if view["status"] not in ("waiting", "admitted") or view["queue_number"] < 1:
                    wrong.append(answer.text)
                numbers.setdefault(customer, set()).add(view["queue_number"])
            elif answer.status_code == 429:
                if answer.json()["error"]["code"] != "rate_limited" or int(answer.headers["Retry-After"]) < 1:
                    wrong.append(answer.text)
            else:
                wrong.append(f"{answer.status_code} {answer.text}")

    started = time.monotonic()
    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(arrive, arrivals))
    burst_seconds = time.monotonic() - started
    assert not wrong, wrong[:5]
    assert set(statuses) <= {200, 429} and statuses[200] + statuses[429] == ARRIVALS, statuses
    assert statuses[429] >= 1, statuses  # four joins at once from one customer do hit the limit
    assert len(numbers) == PATIENT + IMPATIENT  # everyone has a place in the queue
    assert all(len(seen) == 1 for seen in numbers.values())  # a repeated join keeps its number
    number_of = {c: next(iter(seen)) for c, seen in numbers.items()}
    assert len(set(number_of.values())) == len(number_of)  # never one number for two customers

    by_number = sorted(number_of, key=number_of.get)
    head, rest = by_number[:HEAD], by_number[HEAD:]
    final: dict[str, str] = {}
    admitted_seen: set[str] = set()
    retry_at: dict[str, float] = {}

    def follow(customer: str) -> None:
        if time.monotonic() < retry_at.get(customer, 0):
            return
        polled = api.request("GET", f"/events/{event_id}/queue", customer=customer)
        assert polled.status_code in (200, 429), polled.text
        if polled.status_code == 429:
            retry_at[customer] = time.monotonic() + int(polled.headers["Retry-After"])
            return
        view = polled.json()
        if view["status"] == "admitted":
            with lock:
                admitted_seen.add(customer)
            booked = api.request("POST", f"/events/{event_id}/bookings", customer=customer, key=str(uuid.uuid4()),
                                 json={"quantity": 1}, headers={"X-Admission-Token": view["admission_token"]})
            assert booked.status_code in (201, 409, 429), booked.text
            if booked.status_code == 429:
                retry_at[customer] = time.monotonic() + int(booked.headers["Retry-After"])
            elif booked.status_code == 201:
                final[customer] = "booked"
            else:
                assert booked.json()["error"]["code"] == "sold_out", booked.text
                final[customer] = "sold_out"
        elif view["status"] == "sold_out" or (view["status"] == "waiting" and view["paused"]):
            final[customer] = view["status"] if view["status"] == "sold_out" else "paused"
        else:
            assert view["status"] == "waiting" and view["position"] >= 1, view

    started = time.monotonic()
    deadline = started + 180
    while len(final) < len(head):
        assert time.monotonic() < deadline, f"the head of the queue did not settle: {Counter(final.values())}"
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(follow, [c for c in head if c not in final]))
        time.sleep(0.2)
    outcomes = Counter(final.values())
    head_seconds = time.monotonic() - started
    assert outcomes["booked"] == CAPACITY, outcomes

    # Customers further back: their place is kept, and skipping the queue is refused.
    tokens = {}
    skipped: Counter = Counter()

    def straggle(customer: str) -> None:
        for _ in range(3):
            polled = api.request("GET", f"/events/{event_id}/queue", customer=customer)
            if polled.status_code != 429:
                break
            time.sleep(int(polled.headers["Retry-After"]))
        assert polled.status_code == 200, polled.text
        view = polled.json()
        assert view["queue_number"] == number_of[customer], view
        if view["status"] == "admitted":  # let in before the places ran out; booking says so
            tokens[customer] = view["admission_token"]
            return
        assert view["status"] == "waiting" and view["position"] >= 1 and view["paused"], view
        forged = random.choice([None, next(iter(tokens.values()), None), "forged.token"])
        headers = {"X-Admission-Token": forged} if forged else {}
        answer = api.request("POST", f"/events/{event_id}/bookings", customer=customer, key=str(uuid.uuid4()),
                             json={"quantity": 1}, headers=headers)
        assert answer.status_code in (403, 429), answer.text
        with lock:
            skipped[answer.json()["error"]["code"]] += 1

    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(straggle, random.Random(11).sample(rest, STRAGGLERS)))
    straggle_seconds = time.monotonic() - started
    assert skipped and set(skipped) <= {"admission_required", "admission_token_invalid",
                                        "admission_token_mismatch", "rate_limited"}, skipped

    # What the table says: every hold belongs to an admitted customer; no place went twice.
    assert api.counts(event_id) == {"available": 0, "held": CAPACITY, "sold": 0}
    holders = [item["pk"]["S"].removeprefix("CUSTOMER#") for item in scan(
        system, FilterExpression="begins_with(sk, :s)",
        ExpressionAttributeValues={":s": {"S": f"EVENT#{event_id}#BOOKING#"}})]
    admitted = {item["customer_id"]["S"] for item in scan(
        system, FilterExpression="begins_with(pk, :p) AND attribute_exists(admitted_at)",
        ExpressionAttributeValues={":p": {"S": f"QUEUE#{event_id}#CUST#"}})}
    assert len(holders) == len(set(holders)) == CAPACITY
    assert set(holders) <= admitted and set(holders) <= admitted_seen
    print(f"\nburst: {ARRIVALS:,} arrivals in {burst_seconds:.0f} s ({ARRIVALS / burst_seconds:.0f}/s), {statuses[429]} limited; "
          f"head {dict(outcomes)} in {head_seconds:.0f} s; stragglers {dict(skipped)} in {straggle_seconds:.0f} s; "
          f"{len(admitted)} customers saw their admission")
