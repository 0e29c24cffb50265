"""Functions in worker processes (devstack/aws/workers.py), over HTTP on the real template.

In-process, the stack runs one invocation at a time, so no HTTP test can see two invocations of the
system overlap. With worker processes they do: two cancels of one booking run at once in two
execution environments, and the store's conditions still let exactly one of them release the place.
The API stand-in's own limits are checked here too: the stage's throttling, Lambda's concurrency
(a throttle answered 429) and the integration timeout (504).
"""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from devstack.aws import EmbeddedStack
from devstack.aws.throttling import StageThrottle
from devstack.paysandbox import SandboxServer
from tests.support.api import BookingApi

from .conftest import REPO_ROOT

CANCEL_ROUTE = "POST /bookings/{booking_id}/cancel"


@pytest.fixture(scope="module")
def worker_system():
    with SandboxServer(host="127.0.0.1", port=0) as sandbox:
        stack = EmbeddedStack(str(REPO_ROOT), aws_port=0, api_port=0, wait_scale=0.0001,
                              parameters={"ProviderApiUrl": sandbox.base_url}, lambda_workers=True,
                              default_concurrency=2)
        stack.start()
        try:
            yield stack, BookingApi(stack.api_url)
        finally:
            stack.stop()


def _at_once(*calls):
    barrier = threading.Barrier(len(calls))
    answers: list = [None] * len(calls)

    def run(i, call):
        barrier.wait()
        answers[i] = call()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return answers


def test_two_cancels_of_one_booking_overlap_and_release_the_place_once(worker_system):
    stack, api = worker_system
    pool = stack.functions["BookingsApiFunction"].pool
    event = api.create_event(capacity=3)
    # both execution environments warm first, so the cancels do not wait for a cold start
    warm = [lambda: api.request("GET", f"/bookings/{uuid.uuid4()}", customer="nobody")] * 2
    assert [a.status_code for a in _at_once(*warm)] == [404, 404]
    assert pool.stats()["workers"] == 2

    overlapped = 0
    for attempt in range(4):
        customer = f"twice-{attempt}-{uuid.uuid4().hex[:6]}"
        held = api.book(event["event_id"], customer)
        assert held.status_code == 201, held.text
        booking_id = held.json()["booking_id"]
        before = len(pool.records)
        first, second = _at_once(lambda: api.cancel(booking_id, customer), lambda: api.cancel(booking_id, customer))
        assert sorted([first.status_code, second.status_code]) in ([200, 200], [200, 409]), (first.text, second.text)
        assert api.booking(booking_id, customer)["status"] == "CANCELLED"
        assert api.counts(event["event_id"])["available"] == 3  # released once: never 4
        cancels = [r for r in pool.records[before:] if r.route == CANCEL_ROUTE]
        assert len(cancels) == 2
        a, b = cancels
        if a.pid != b.pid and a.started < b.ended and b.started < a.ended:
            overlapped += 1
            break  # seen: the attempts before it were checked just the same
    assert overlapped, "no two cancels ever ran at the same time"


def test_stage_throttling_answers_429_with_retry_after(worker_system):
    stack, api = worker_system
    saved = stack._api.throttle
    stack._api.throttle = StageThrottle([
        {"ResourcePath": "/*", "HttpMethod": "*", "ThrottlingRateLimit": 1000, "ThrottlingBurstLimit": 2000},
        {"ResourcePath": "/~1events~1{event_id}", "HttpMethod": "GET", "ThrottlingRateLimit": 0.1,
         "ThrottlingBurstLimit": 2}])
    try:
        event = api.create_event(capacity=1)  # POST /events: the stage default, far from its limit
        answers = [api.request("GET", f"/events/{event['event_id']}") for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]
        assert answers[2].headers["Retry-After"] == "10"  # one token every 10 s
        assert answers[2].json() == {"message": "Too Many Requests"}
    finally:
        stack._api.throttle = saved


def test_a_function_at_its_concurrency_is_throttled_and_a_slow_answer_times_out(worker_system):
    stack, api = worker_system
    fn = stack.functions["CatalogApiFunction"]  # GET /events; no other test here warms it
    saved = fn.pool.concurrency, stack._api.lambda_queue_wait, stack._api.integration_timeout
    fn.pool.concurrency, stack._api.lambda_queue_wait = 1, 0.0
    try:
        # the function's one environment is busy with its cold start: the other request is throttled
        answers = _at_once(lambda: api.request("GET", "/events"), lambda: api.request("GET", "/events"))
        assert sorted(a.status_code for a in answers) == [200, 429]
        throttled = next(a for a in answers if a.status_code == 429)
        assert throttled.json()["error"]["code"] == "function_throttled"
        assert throttled.headers["Retry-After"] == "1"
        assert fn.pool.stats()["throttles"] == 1
        stack._api.integration_timeout = 0.001
        started = time.monotonic()
        late = api.request("GET", "/events")
        assert late.status_code == 504 and late.json() == {"message": "Endpoint request timed out"}
        assert time.monotonic() - started < 5
    finally:
        fn.pool.concurrency, stack._api.lambda_queue_wait, stack._api.integration_timeout = saved


def test_a_method_setting_replaces_the_stage_default_and_refills_at_its_rate():
    now = [0.0]
    throttle = StageThrottle([
        {"ResourcePath": "/*", "HttpMethod": "*", "ThrottlingRateLimit": 1000, "ThrottlingBurstLimit": 2000},
        {"ResourcePath": "/~1events~1{event_id}~1bookings", "HttpMethod": "POST", "ThrottlingRateLimit": 300,
         "ThrottlingBurstLimit": 600}], clock=lambda: now[0])
    route = "/events/{event_id}/bookings"
    assert throttle.limits(route, "post") == (300.0, 600.0)
    assert throttle.limits(route, "GET") == (1000.0, 2000.0)
    assert [throttle.take(route, "POST") for _ in range(600)] == [None] * 600  # the burst
    wait = throttle.take(route, "POST")
    assert wait is not None and abs(wait - 1 / 300) < 1e-9
    now[0] += 0.1  # 30 tokens back, not more
    assert [throttle.take(route, "POST") for _ in range(31)].count(None) == 30
    assert throttle.take(route, "GET") is None  # another method's bucket is its own


def test_a_function_that_fails_to_start_answers_its_init_error(tmp_path):
    """The pool answers a failed start the way Lambda does (an error payload per invocation),
    not with an exception the caller has to know about."""
    from devstack.aws.runtime import LocalFunction, run_function
    from devstack.aws.workers import WorkerPool

    (tmp_path / "app.py").write_text("raise RuntimeError('no configuration')\n")
    fn = LocalFunction(logical_id="BrokenFunction", function_name="broken", arn="arn:aws:lambda:::function:broken",
                       code_dir=tmp_path, handler="app.lambda_handler")
    fn.pool = WorkerPool(fn, 1, {}, [str(REPO_ROOT)], quiet=True)
    try:
        result, error = run_function(fn, {}, "request-1")
    finally:
        fn.pool.close()
    assert result is None
    assert error["errorType"] == "RuntimeError" and "no configuration" in error["errorMessage"]
    assert error["requestId"] == "request-1"
