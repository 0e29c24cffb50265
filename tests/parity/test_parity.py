"""What AWS would run: the functions as `sam build` builds them, in interpreters that hold only
what Lambda's python3.12 runtime holds, invoked with every sample event against the local stack.

The rest of the suite imports the functions from the source tree inside the dev venv, which has
every package; a dependency the layer lacks (aws-xray-sdk, once) passes there and fails every
function on AWS at import. Here it fails the test.
"""
from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from devstack import sample_events
from holdfast.clock import system_clock
from tests.parity import build
from tests.parity.lambda_env import LambdaEnvironment
from tests.support import iam
from tests.support.handlers import REPO
from tests.support.system import local_system
from tests.support.template import template

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

SAMPLE_EVENT_ID = "7d1f3c2a-7c55-4f0c-9a59-3f4b7f0b2b11"
SAMPLE_WAITLIST_EVENT_ID = "7d1c2a4e-5b3f-4c8e-9a10-2f4b6c8d0e12"
SAMPLE_BOOKING_ID = "0b6a6d7e-2f0f-4d7e-8a8e-6f1e0b9c4a21"
SAMPLE_PAYMENT_ID = "2f9a3c4e-000f-5000-9000-1b2c3d4e5f60"
SAMPLE_RESOURCE_ID = "5c1f7e2a-3b4d-4e6f-8a9b-0c1d2e3f4a5b"
SAMPLE_SERVICE_ID = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
SAMPLE_LOT_ID = "4a7e2c1d-8b3f-4d5e-9f60-1a2b3c4d5e6f"
SAMPLE_GATE_ID = "6b8f3d2e-9c4a-4e6f-8a71-2b3c4d5e6f70"
SAMPLE_GATE_KEY = "gk_sample-gate-key-replaced-by-the-real-one"
SAMPLE_DOOR_ID = "3c9e1a7b-6d2f-4b8e-9a05-7e1d2c3b4a59"
SAMPLE_DOOR_KEY = "dk_sample-door-key-replaced-by-the-real-one"
SAMPLE_BUCKET = "2030-05-01T09:40:00.000Z"

# Step Functions task payloads: which function each machine's task hands them to
TASK_EVENTS = {"expire_hold.json": "ExpireHoldFunction", "hold_reminder.json": "NotifierFunction",
               "reconcile_payment.json": "ReconcilePaymentFunction",
               "event_cancellation_task.json": "CancelEventFunction",
               "parking_hold_reminder_bucket.json": "NotifierFunction"}
#: The notifier's samples that read a lot's bookings, run once for each status the parking kind
#: declares (issue 28, finding 9): the notifier never imports the kinds, and on Lambda nothing
#: else loads them into its interpreter.
PARKING_STATUS_SAMPLES = {"parking_lot_changed_sqs.json": {"batchItemFailures": []},
                          "parking_hold_reminder_bucket.json": {"reminded": 0}}


def _functions() -> dict[str, dict[str, Any]]:
    return {name: r["Properties"] for name, r in template()["Resources"].items()
            if r["Type"] == "AWS::Serverless::Function"}


def function_for(event_file: str, stack: Any) -> str:
    """The function a sample event belongs to, found from the template's event sources."""
    if event_file in TASK_EVENTS:
        return TASK_EVENTS[event_file]
    event = sample_events.load(event_file)
    owners = []
    for name, props in _functions().items():
        for source in (props.get("Events") or {}).values():
            kind, p = source["Type"], source.get("Properties") or {}
            if kind == "Api" and "httpMethod" in event:
                if (p["Method"].upper(), p["Path"]) == (event["httpMethod"], event["resource"]):
                    owners.append(name)
            elif kind == "SNS" and event.get("Records", [{}])[0].get("EventSource") == "aws:sns":
                if event["Records"][0]["Sns"]["TopicArn"].endswith("-" + p["Topic"]["Ref"]):
                    owners.append(name)
            elif kind in ("SQS", "DynamoDB") and "eventSourceARN" in (event.get("Records") or [{}])[0]:
                logical = (p.get("Queue") or p.get("Stream"))["Fn::GetAtt"][0]
                arn = event["Records"][0]["eventSourceARN"]
                if kind == "SQS" and arn.rsplit(":", 1)[-1] == stack.attributes[logical]["QueueName"]:
                    owners.append(name)
                if kind == "DynamoDB" and arn.split(":table/")[-1].split("/")[0] == stack.resources[logical]:
                    owners.append(name)
            elif kind == "Schedule" and event.get("detail-type") == "Scheduled Event":
                owners.append(name)
    assert len(owners) == 1, f"{event_file}: owned by {owners or 'no function'}"
    return owners[0]


@pytest.fixture(scope="module")
def built() -> Path:
    started = time.monotonic()
    path = build.build()
    print(f"\nsam build ({build.host_architecture()}): {time.monotonic() - started:.1f}s -> {path}")
    return path


def test_the_layer_ships_every_file_of_the_package(built):
    """The message templates are plain files inside the package, the core's and each product's
    (services/messages.py finds a product's beside its package): one left out of the build fails
    only on AWS, when that message is first rendered."""
    source = REPO / "layers" / "holdfast" / "holdfast"
    shipped = built / "HoldfastLayer" / "python" / "holdfast"
    wanted = [path.relative_to(source) for path in sorted(source.rglob("*"))
              if path.is_file() and "__pycache__" not in path.parts]
    assert any(path.suffix == ".txt" and "products" in path.parts for path in wanted)
    assert [str(path) for path in wanted if not (shipped / path).is_file()] == []


@pytest.fixture(scope="module")
def runtime_sdk() -> Path:
    return build.runtime_sdk()


@pytest.fixture(scope="module")
def xray_daemon():
    """Where the X-Ray SDK sends its segments on Lambda (a UDP daemon); counts what arrives."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    yield sock
    sock.close()


def _drain(sock: socket.socket) -> int:
    count = 0
    while True:
        try:
            sock.recv(65536)
        except BlockingIOError:
            return count
        count += 1


@pytest.fixture(scope="module")
def parity_system():
    default_networks = template()["Parameters"]["AllowedWebhookNetworks"]["Default"]
    with local_system(AllowedWebhookNetworks=default_networks) as running:
        yield running


@pytest.fixture(scope="module")
def environments(parity_system, built, runtime_sdk, xray_daemon, tmp_path_factory):
    stack = parity_system["stack"]
    logs = tmp_path_factory.mktemp("lambda-logs")
    layer = built / "HoldfastLayer" / "python"
    envs = {lid: LambdaEnvironment(fn, stack, built / lid, layer, runtime_sdk,
                                   xray_daemon.getsockname()[1], logs / f"{lid}.log")
            for lid, fn in stack.functions.items()}
    try:
        yield envs
    finally:
        for env in envs.values():
            env.close()


def test_every_function_imports_from_the_build_alone(environments, built, runtime_sdk):
    failures = {}
    for lid, env in environments.items():
        init = env.ready()
        if not init["ready"]:
            failures[lid] = f"{init['errorType']}: {init['errorMessage']}"
            continue
        allowed = (str(built / lid), str(built / "HoldfastLayer" / "python"), str(runtime_sdk))
        for name, where in init["modules"].items():
            assert where and where.startswith(allowed), f"{lid}: {name} came from {where}"
        # XRaySdkTracing defaults to false: no function pays for the SDK at its cold start
        assert "aws_xray_sdk" not in init["modules"], f"{lid} imported the X-Ray SDK"
    assert not failures, "functions that fail at import on Lambda:\n" + "\n".join(
        f"  {lid}: {error}" for lid, error in sorted(failures.items()))


# The sample events in the order a customer's story runs, with what each must answer. Sample ids
# are swapped for the ones this run creates. API answers: (status, error code or None).
SCENARIO: list[tuple[str, Any]] = [
    ("create_organizer.json", (201, None)),            # the platform key (devstack/organizers.py)
    ("list_organizers.json", (200, None)),
    ("suspend_organizer.json", (404, "organizer_not_found")),   # no organizer by the sample's id
    ("resume_organizer.json", (404, "organizer_not_found")),
    ("get_own_organizer.json", (200, None)),
    ("add_organizer_key.json", (201, None)),           # the second organizer gains a key
    ("delete_organizer_key.json", (404, "key_not_found")),      # no key by the sample's id
    ("create_event.json", (201, None)),
    ("create_seated_event.json", (201, None)),
    ("get_event.json", (200, None)),
    ("publish_event.json", (200, None)),
    ("update_event.json", (200, None)),                # its start moved later: the sale gate shards take the terms version
    ("list_events.json", (200, None)),
    ("get_seat_map.json", (200, None)),
    ("create_seat_booking.json", (201, None)),
    ("create_booking.json", (201, None)),
    ("get_booking.json", (200, None)),
    ("get_booking_pass.json", (404, "no_pass")),       # an event booking carries no entry pass
    ("get_booking_ticket.json", (404, "no_pass")),     # tickets come with CONFIRMED; the booking is HELD
    ("create_door.json", (201, None)),                 # the event's public key derives from the signing seed
    ("get_door_config.json", (200, None)),
    ("door_scan.json", (200, None)),                   # not a ticket: bad_token, recorded
    ("door_sync.json", (200, None)),                   # the same offline: a check-in case opens
    ("get_checkins.json", (200, None)),
    ("delete_door.json", {"statusCode": 204}),
    ("get_customer_texts.json", (200, None)),
    ("create_resource.json", (201, None)),            # its zone resolves from the layer's tzdata
    ("resource_day.json", (200, None)),               # nothing booked on the sample's day
    ("create_service.json", (201, None)),
    ("publish_service.json", (200, None)),
    ("list_services.json", (200, None)),
    ("get_service_availability.json", (200, None)),
    ("create_service_booking.json", (201, None)),
    ("create_lot.json", (201, None)),                  # the lot's public key derives from the parking secret
    ("publish_lot.json", (200, None)),
    ("list_lots.json", (200, None)),
    ("get_lot.json", (200, None)),
    ("create_reservation.json", (201, None)),
    ("create_gate.json", (201, None)),
    ("list_gates.json", (200, None)),
    ("create_subscription.json", (201, None)),
    ("get_gate_config.json", (200, None)),
    ("gate_entry.json", (200, None)),                  # a drive-up car takes a space
    ("gate_exit.json", (200, None)),                   # within the grace minutes: nothing owed
    ("gate_sync.json", (200, None)),                   # two offline passes, applied in the gate's order
    ("rotate_gate_key.json", (200, None)),             # the gate's key is replaced; the old one is refused
    ("delete_gate.json", {"statusCode": 204}),
    ("start_payment.json", (201, None)),              # the sandbox provider creates the payment
    ("payment_notification.json", (200, None)),       # from YooKassa's network: queued
    ("payment_events_sqs.json", {"batchItemFailures": []}),
    ("get_booking_journal.json", (200, None)),
    ("list_reviews.json", (200, None)),
    ("resolve_review.json", (409, "not_in_review")),
    ("resolve_gate_case.json", (404, "gate_case_not_found")),   # no gate case by the sample's id
    ("resolve_checkin_case.json", (404, "checkin_case_not_found")),   # nor a check-in case
    ("list_sales.json", (200, None)),
    ("join_queue.json", (200, None)),                 # not a high-demand sale: no queue needed
    ("queue_status.json", (200, None)),
    ("join_waitlist.json", (409, "places_available")),   # places are free: book them, no line
    ("get_waitlist_entry.json", (404, "not_on_waitlist")),
    ("leave_waitlist.json", (404, "not_on_waitlist")),
    ("outbox_stream.json", {"batchItemFailures": []}),
    ("notification_sqs.json", {"batchItemFailures": []}),
    ("webhook_events_sqs.json", {"batchItemFailures": []}),   # a fact no organizer has an endpoint for
    ("export_job_sqs.json", {"batchItemFailures": []}),       # a job that does not exist (run before, or never)
    ("hold_reminder.json", {"reminded": False}),      # the hold is far from its end
    ("reconcile_payment.json", {"outcome": "pending", "status": "PAYMENT_PENDING"}),
    ("expire_hold.json", {"outcome": "not_yet"}),
    ("resolve_conflict.json", (409, "no_resolution")),   # the sample booking has no conflict case
    ("cancel_booking.json", (200, None)),
    ("cancel_event.json", (202, None)),               # the organizer cancels the event last
    ("get_event_cancellation.json", (200, None)),
    ("event_cancellation_task.json", {"outcome": "nothing_cancelled"}),   # the customer cancelled it first
    ("sweep_due.json", {"expired": 0, "reconciling": 0, "skipped": 0}),
    ("ses_bounce_sns.json", {"suppressed": 1}),       # a permanent bounce puts its one recipient on the list
]


# which answers carry the ids the later sample events use
CREATES = {"create_event.json": ("event", "event_id"), "create_seated_event.json": ("seated_event", "event_id"),
           "create_booking.json": ("booking", "booking_id"), "start_payment.json": ("payment", "payment_id"),
           "create_resource.json": ("resource", "resource_id"), "create_service.json": ("service", "service_id"),
           "create_lot.json": ("lot", "lot_id"), "create_gate.json": ("gate", "gate_id"),
           "create_reservation.json": ("reservation", "booking_id"),
           "create_gate.json#key": ("gate_key", "gate_key"), "create_door.json": ("door", "door_id"),
           "create_door.json#key": ("door_key", "door_key")}


def _dig(body: Any, path: str) -> str:
    for part in path.split("."):
        body = body[part]
    return body


def _substituted(event_file: str, ids: dict[str, str]) -> Any:
    today = system_clock().date()
    text = sample_events.text(event_file, today)   # its dates as of today: the sample bucket likewise
    seated = event_file in ("get_seat_map.json", "create_seat_booking.json")
    swaps = {SAMPLE_EVENT_ID: ids.get("seated_event" if seated else "event"),
             SAMPLE_WAITLIST_EVENT_ID: ids.get("event"), SAMPLE_BOOKING_ID: ids.get("booking"),
             SAMPLE_PAYMENT_ID: ids.get("payment"), SAMPLE_RESOURCE_ID: ids.get("resource"),
             SAMPLE_SERVICE_ID: ids.get("service"), SAMPLE_LOT_ID: ids.get("lot"), SAMPLE_GATE_ID: ids.get("gate"),
             SAMPLE_GATE_KEY: ids.get("gate_key"), SAMPLE_DOOR_ID: ids.get("door"),
             SAMPLE_DOOR_KEY: ids.get("door_key"),
             sample_events.moved(SAMPLE_BUCKET, today): ids.get("bucket")}
    for sample, real in swaps.items():
        if real:
            text = text.replace(sample, real)
    return json.loads(text)


TABLE_READS = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
TABLE_WRITES = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem")


def _unreached(actions, *, reads=(), writes=()):
    return {**dict.fromkeys(reads), **dict.fromkeys(writes), **dict.fromkeys(actions)}


#: Grants the sample events do not exercise, per function, and the paths that need them. The
#: table's actions are granted in two groups, the reads to every function and the writes to every
#: function that writes (one store adapter serves them all, and which write action a path uses
#: depends on the items it touches): the entries below name the members of those groups the
#: samples happen not to use. Anything else granted and never used fails the test, and so does an
#: entry here that has gone stale (used by the scenario, or no longer granted).
REACHED_OUTSIDE_THE_SAMPLES: dict[str, dict[str, None]] = {
    # resolving a review writes the booking and its journal; a refund decided there is reconciled;
    # deleting an organizer's key removes its items (the sample's key id is made up) and a resolved
    # review's transaction checks the booking
    # (and a webhook's test or redelivery is an attempt sent to the webhook attempts queue, an export
    # job is sent to its queue, and an export file's download link is presigned with the role's
    # credentials: s3:GetObject is used by whoever follows the link, never called by the function)
    "AdminApiFunction": _unreached(["states:StartExecution", "sqs:SendMessage*", "s3:GetObject"],
                                   writes=["dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]),
    # cancellations and parking reservations write more kinds of items; a confirmed parking
    # reservation's view signs its entry token with the lot's key (the parking key secret); a
    # confirmed booking cancelled is refunded, and the refund reconciled on an execution of its own
    # (a new payment's first check rides on the hold expiry tick, which the samples do start)
    "BookingsApiFunction": _unreached(["dynamodb:DeleteItem", "secretsmanager:GetSecretValue", "states:StartExecution"]),
    # the sample's event has no bookings: settling one reads and writes them, and a refund whose
    # answer was lost is reconciled
    "CancelEventFunction": _unreached(["states:StartExecution"], reads=["dynamodb:BatchGetItem", "dynamodb:Query"],
                                      writes=TABLE_WRITES),
    # a listing with published events reads their counts in batches (pools, BatchGetItem)
    "CatalogApiFunction": _unreached(["dynamodb:BatchGetItem"]),
    # (update_event.json's edit drops the old index items: its Delete is reached by the samples)
    "EventsApiFunction": _unreached(["dynamodb:ConditionCheckItem"]),
    # the sample's bucket holds nothing due: expiring holds releases their places
    "ExpireHoldFunction": _unreached([], reads=["dynamodb:BatchGetItem", "dynamodb:Query"], writes=TABLE_WRITES),
    # a message sent is recorded (PutItem) and one that could not be sent takes its record back
    # (forget_notification: DeleteItem); the samples' bookings give no address, so nothing is
    # mailed (SES), nothing recorded, and no confirmed parking
    # booking's message signs its entry pass with the lot's key (the parking key secret)
    "NotifierFunction": _unreached(["ses:SendEmail", "secretsmanager:GetSecretValue"],
                                   reads=["dynamodb:Query"],
                                   writes=["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
                                           "dynamodb:ConditionCheckItem"]),
    # a released place offered to the waitlist is a hold with its timer; Lambda's stream poller
    # sends a failed batch to the OnFailure queue with the function's role (SAM grants it)
    "OutboxRelayFunction": _unreached(["states:StartExecution", "sqs:SendMessage"], reads=["dynamodb:BatchGetItem"],
                                      writes=TABLE_WRITES),
    # Lambda sends an asynchronous invocation (SNS's) that fails its retries to the dead-letter
    # queue with the function's role (SAM grants it)
    "MailFeedbackFunction": _unreached(["sqs:SendMessage"]),
    # a door's scan beyond a gap is held (a ConditionCheck on its cursor); the sample's come in order
    "DoorsApiFunction": _unreached([], writes=["dynamodb:ConditionCheckItem"]),
    # the sample gate's configuration lists voided reservations, summarised in batches; a lot whose
    # holds need a solved challenge reads the CAPTCHA verifier's key on its first such hold (the
    # samples' lot needs none)
    "ParkingApiFunction": _unreached(["secretsmanager:GetSecretValue"]),
    # the sample's payment matches no booking: applying one confirms or refunds, and reconciles
    "PaymentEventsFunction": _unreached(["states:StartExecution"], reads=["dynamodb:BatchGetItem", "dynamodb:Query"],
                                        writes=TABLE_WRITES),
    # a check that settles a payment writes the booking; one that starts a refund reconciles it
    "ReconcilePaymentFunction": _unreached(["states:StartExecution"], reads=["dynamodb:BatchGetItem", "dynamodb:Query"],
                                           writes=["dynamodb:UpdateItem", "dynamodb:DeleteItem",
                                                   "dynamodb:ConditionCheckItem"]),
    # nothing is overdue in the sample: expiring, restarting reconciliation or a cancellation (the
    # provider secret, for giving money back on a lapsed conflict case, is checked at its start)
    "SweepDueFunction": _unreached(["states:StartExecution", "states:DescribeExecution"],
                                   reads=["dynamodb:GetItem", "dynamodb:BatchGetItem"], writes=TABLE_WRITES),
    # joining writes the queue entry; admitting reads the queue
    "WaitingRoomFunction": _unreached([], reads=["dynamodb:BatchGetItem", "dynamodb:Query"],
                                      writes=["dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]),
    # joining a sold-out event writes the entry, and an offer made at once is a hold with its timer
    "WaitlistApiFunction": _unreached(["states:StartExecution"], reads=["dynamodb:Query"], writes=TABLE_WRITES),
    # the sample's fact is for an organizer with no endpoint: one with endpoints records a delivery
    # per endpoint and sends its attempt (and its retries) to the attempts queue
    "WebhookDeliveryFunction": _unreached(["sqs:SendMessage*"], writes=["dynamodb:PutItem", "dynamodb:UpdateItem"]),
    # the sample's job does not exist: a job reads the organizer's keys, offerings and bookings and
    # writes its file (its attempt's note, an UpdateItem, is tried for the sample's job too)
    "ExportJobFunction": _unreached(["s3:PutObject"], reads=["dynamodb:BatchGetItem", "dynamodb:Query"]),
}


def test_every_function_answers_its_sample_events(environments, parity_system, xray_daemon):
    stack = parity_system["stack"]
    for env in environments.values():
        assert env.ready()["ready"], f"{env.logical_id} does not import: {env.ready()}"
    samples = sorted(p.name for p in (REPO / "events").glob("*.json"))
    assert sorted([f for f, _ in SCENARIO] + list(PARKING_STATUS_SAMPLES)) == samples, (
        "every sample event is in the scenario, once")
    ids: dict[str, str] = {}
    calls = [{**c, "function": lid} for lid, env in environments.items() for c in env.ready()["calls"]]
    answered: dict[str, list[str]] = {lid: [] for lid in environments}
    _drain(xray_daemon)
    for event_file, expected in SCENARIO:
        lid = function_for(event_file, stack)
        answer = environments[lid].invoke(_substituted(event_file, ids))
        assert "errorType" not in answer, (f"{event_file} -> {lid}: {answer['errorType']}: "
                                           f"{answer['errorMessage']}\n{answer.get('trace', '')}")
        calls.extend({**c, "function": lid} for c in answer["calls"])
        result = answer["result"]
        answered[lid].append(event_file)
        body = json.loads(result["body"]) if isinstance(result, dict) and result.get("body") else None
        if isinstance(expected, tuple):
            status, code = expected
            assert (result["statusCode"], (body or {}).get("error", {}).get("code")) == (status, code), (
                f"{event_file} -> {lid}: {json.dumps(result)[:600]}")
            assert result["multiValueHeaders"]["Content-Type"] == ["application/json"]
        else:
            assert {k: result.get(k) for k in expected} == expected, f"{event_file} -> {lid}: {result}"
        for created, (name, path) in CREATES.items():
            if created.split("#")[0] == event_file:
                ids[name] = _dig(body, path)
    assert ids["booking"] in json.dumps(_substituted("get_booking.json", ids))
    assert not [lid for lid, files in answered.items() if not files], f"functions without a sample event: {answered}"
    time.sleep(0.2)
    segments = _drain(xray_daemon)
    print(f"\nX-Ray segments sent to the daemon address: {segments}")
    # without the SDK (XRaySdkTracing=false) Lambda's active tracing records the invocations; the
    # functions send nothing themselves (the SDK's own run: the test below)
    assert segments == 0, "a function sent segments without XRaySdkTracing=true"
    # moto enforces no IAM: hold every call the built functions made to their roles
    verdict = iam.check(calls, stack)
    performed = sorted({(c["function"], c["service"], c["action"]) for c in calls})
    print(f"\n{len(calls)} AWS calls by the built functions; (function, service, action) performed:")
    for row in performed:
        print("  ", *row)
    assert {lid for lid, _, _ in performed} == set(environments), "every function reached AWS"
    assert not verdict.denied, "AccessDenied on AWS:\n" + "\n".join(verdict.denied)
    # least privilege: a function is granted what it does in the scenario, plus what
    # REACHED_OUTSIDE_THE_SAMPLES names (each with the path that needs it), and nothing else
    unused = {(function, grant.split(" on ", 1)[0].lower()) for function, grants in verdict.unused.items()
              for grant in grants}
    allowed_unused = {(function, action.lower()) for function, actions in REACHED_OUTSIDE_THE_SAMPLES.items()
                      for action in actions}
    assert not unused - allowed_unused, "granted and never used:\n" + "\n".join(
        f"  {f}: {a}" for f, a in sorted(unused - allowed_unused))
    assert not allowed_unused - unused, "REACHED_OUTSIDE_THE_SAMPLES names grants the scenario uses or the role " \
        "lacks (keep it exact):\n" + "\n".join(f"  {f}: {a}" for f, a in sorted(allowed_unused - unused))


def test_the_notifier_alone_reads_a_lot_s_bookings_in_every_parking_status(environments):
    """A lot's change and an expiry bucket's reminders, delivered to the built notifier in its own
    interpreter while the lot's reservation is in each status the parking kind declares."""
    from holdfast import kinds, wiring
    from holdfast.adapters.codec import _attrs
    from holdfast.adapters.expiry_buckets import bucket_of

    for lid in ("ParkingApiFunction", "NotifierFunction"):
        assert environments[lid].ready()["ready"], environments[lid].ready()
    ids: dict[str, str] = {}
    for event_file in ("create_lot.json", "create_reservation.json"):   # a repeat replays the scenario's
        lid = "ParkingApiFunction"
        answer = environments[lid].invoke(_substituted(event_file, ids))
        assert "errorType" not in answer, answer
        result = answer["result"]
        assert result["statusCode"] in (200, 201), result
        name, path = CREATES[event_file]
        ids[name] = _dig(json.loads(result["body"]), path)
    store = wiring.store()
    booking = store.get_booking(ids["reservation"])
    ids["booking"], ids["bucket"] = ids["reservation"], bucket_of(booking.hold_expires_at)
    key = _attrs({"pk": f"BOOKING#{booking.booking_id}", "sk": "META"})
    statuses = [state.status for state in kinds.named("parking").extra_states]
    assert {"CHECKED_IN", "NO_SHOW", "COMPLETED", "CANCELLED_NO_REFUND"} <= set(statuses)
    try:
        for status in statuses:
            # the status as the gate, the timer or the customer leaves it (their paths are the
            # scenario's and the parking suite's; the notifier's reading of it is what is held here)
            store.client.update_item(TableName=store.table, Key=key, UpdateExpression="SET #s = :s",
                                     ExpressionAttributeNames={"#s": "status"},
                                     ExpressionAttributeValues=_attrs({":s": status}))
            for event_file, expected in PARKING_STATUS_SAMPLES.items():
                answer = environments["NotifierFunction"].invoke(_substituted(event_file, ids))
                assert "errorType" not in answer, (f"{event_file} with the reservation {status}: "
                                                   f"{answer['errorType']}: {answer['errorMessage']}")
                result = answer["result"]
                if event_file == "parking_hold_reminder_bucket.json":
                    # the tick's bucket is the platform's: the scenario's other holds due in it may be
                    # reminded here; what is held is that this reservation never is (below)
                    assert isinstance(result.get("reminded"), int), (event_file, status, result)
                else:
                    assert {k: result.get(k) for k in expected} == expected, (event_file, status, result)
        reminded = [n for n in store.list_notifications(booking.customer_id)
                    if n.get("booking_id") == booking.booking_id and n.get("type") == "booking.hold_expiring"]
        assert reminded == [], "a reservation no longer held was reminded"
    finally:
        store.client.update_item(TableName=store.table, Key=key, UpdateExpression="SET #s = :s",
                                 ExpressionAttributeNames={"#s": "status"},
                                 ExpressionAttributeValues=_attrs({":s": booking.status.value}))


def test_the_xray_sdk_tracer_runs_from_the_build_when_asked(parity_system, built, runtime_sdk, xray_daemon,
                                                            tmp_path):
    """XRaySdkTracing=true: Powertools' Tracer and the X-Ray SDK come from the layer and send a
    segment per invocation to the daemon address, as on Lambda."""
    stack = parity_system["stack"]
    fn = stack.functions["SweepDueFunction"]
    asked = SimpleNamespace(**{name: getattr(fn, name) for name in
                               ("function_name", "memory_size", "handler", "arn", "timeout", "logical_id")},
                            environment={**fn.environment, "HOLDFAST_XRAY_SDK": "true"})
    env = LambdaEnvironment(asked, stack, built / "SweepDueFunction", built / "HoldfastLayer" / "python",
                            runtime_sdk, xray_daemon.getsockname()[1], tmp_path / "sweep-xray.log")
    try:
        init = env.ready()
        assert init["ready"], init
        assert init["modules"].get("aws_xray_sdk", "").startswith(str(built / "HoldfastLayer" / "python"))
        _drain(xray_daemon)
        answer = env.invoke(_substituted("sweep_due.json", {}))
        assert "errorType" not in answer, answer
        time.sleep(0.2)
        assert _drain(xray_daemon) >= 1, "Tracer sent the invocation's segment"
    finally:
        env.close()


def test_the_roles_deny_what_the_template_does_not_grant(parity_system):
    """The check reads the real roles: grants the template makes pass, others are AccessDenied."""
    stack = parity_system["stack"]
    machines = {lid: stack.resources[lid] for lid in ("HoldExpiryStateMachine", "ReconciliationStateMachine")}

    def call(function: str, service: str, action: str, **params: Any) -> dict[str, Any]:
        return {"function": function, "service": service, "action": action, "params": params}

    granted = [
        call("BookingsApiFunction", "states", "StartExecution", stateMachineArn=machines["HoldExpiryStateMachine"]),
        call("SweepDueFunction", "states", "StartExecution", stateMachineArn=machines["ReconciliationStateMachine"]),
        call("BookingsApiFunction", "secretsmanager", "GetSecretValue", SecretId="holdfast/provider"),
        call("AdminApiFunction", "secretsmanager", "GetSecretValue", SecretId="holdfast/platform-key"),
        call("PaymentWebhookFunction", "sqs", "SendMessage", QueueUrl=stack.resources["PaymentEventsQueue"]),
        call("OutboxRelayFunction", "events", "PutEvents", Entries=[{"EventBusName": stack.resources["NotificationsBus"]}]),
    ]
    assert iam.check(granted, stack).denied == []
    refused = [
        call("SweepDueFunction", "states", "StartExecution", stateMachineArn=machines["HoldExpiryStateMachine"]),
        call("BookingsApiFunction", "states", "DescribeExecution",
             executionArn=machines["HoldExpiryStateMachine"].replace(":stateMachine:", ":execution:") + ":b-1"),
        call("PaymentWebhookFunction", "secretsmanager", "GetSecretValue", SecretId="holdfast/provider"),
        call("ExpireHoldFunction", "dynamodb", "DeleteTable", TableName=stack.resources["BookingsTable"]),
        call("NotifierFunction", "sqs", "SendMessage", QueueUrl=stack.resources["PaymentEventsQueue"]),
        # the public catalog only reads, and holds no secret (issue 34)
        call("CatalogApiFunction", "dynamodb", "PutItem", TableName=stack.resources["BookingsTable"]),
        call("CatalogApiFunction", "secretsmanager", "GetSecretValue", SecretId="holdfast/provider"),
        # one secret per purpose: the platform key reaches the admin function alone, the provider's
        # key only the functions that call it
        call("BookingsApiFunction", "secretsmanager", "GetSecretValue", SecretId="holdfast/platform-key"),
        call("EventsApiFunction", "secretsmanager", "GetSecretValue", SecretId="holdfast/provider"),
        call("WaitingRoomFunction", "secretsmanager", "GetSecretValue", SecretId="holdfast/organizer-key-hash"),
        call("EventsApiFunction", "dynamodb", "Scan", TableName=stack.resources["BookingsTable"]),
    ]
    assert len(iam.check(refused, stack).denied) == len(refused)
