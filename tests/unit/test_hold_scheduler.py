"""Hold expiry by bucket: one execution per bucket for the whole platform (the tick), started at
most once per bucket by a container; a hold asks for its bucket's tick and, while it is ahead,
for the tick one reminder window earlier, which reminds it."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from holdfast.adapters.aws import StepFunctionsHoldExpiryScheduler
from holdfast.adapters.expiry_buckets import bucket_of, execution_name, reminder_lead

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sfn(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("stepfunctions")
        arn = client.create_state_machine(
            name="hold-expiry", roleArn="arn:aws:iam::123456789012:role/sfn",
            definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}))["stateMachineArn"]
        yield client, arn


def started(client, arn):
    return {e["name"]: json.loads(client.describe_execution(executionArn=e["executionArn"])["input"])
            for e in client.list_executions(stateMachineArn=arn)["executions"]}


NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("deadline, bucket", [
    ("2030-01-01T12:10:00.000Z", "2030-01-01T12:10:00.000Z"),   # on a boundary: its own bucket
    ("2030-01-01T12:10:00.001Z", "2030-01-01T12:10:05.000Z"),
    ("2030-01-01T12:10:04.999Z", "2030-01-01T12:10:05.000Z"),
])
def test_a_deadline_falls_in_the_bucket_that_ends_at_or_after_it(deadline, bucket):
    assert bucket_of(deadline) == bucket


def test_execution_names_are_the_bucket_s_and_valid():
    name = execution_name("2030-01-01T12:10:05.000Z")
    assert name == "exp-20300101T121005" and len(name) <= 80


@pytest.mark.parametrize("seconds, lead", [(0, 0), (1, 5), (5, 5), (120, 120), (121, 125)])
def test_the_reminder_lead_is_whole_buckets_never_shorter_than_the_window(seconds, lead):
    assert reminder_lead(seconds) == lead


@pytest.mark.parametrize("deadline, reminder_seconds, ticks", [
    # a 10-minute hold: its bucket's tick, and the tick 2 min earlier, which reminds it
    ("2030-01-01T12:10:00.000Z", 120, {"exp-20300101T121000": "2030-01-01T12:12:00.000Z",
                                       "exp-20300101T120800": "2030-01-01T12:10:00.000Z"}),
    ("2030-01-01T12:01:00.000Z", 120, {"exp-20300101T120100": "2030-01-01T12:03:00.000Z"}),  # shorter: no reminder
    ("2030-01-01T12:02:00.000Z", 120, {"exp-20300101T120200": "2030-01-01T12:04:00.000Z"}),  # it would be now: none
    ("2030-01-01T12:10:00.000Z", 0, {"exp-20300101T121000": ""}),                            # reminders off
])
def test_a_hold_asks_for_its_bucket_s_tick_and_the_one_that_reminds_it(sfn, deadline, reminder_seconds, ticks):
    client, arn = sfn
    scheduler = StepFunctionsHoldExpiryScheduler(arn, client, reminder_seconds=reminder_seconds, clock=lambda: NOW)
    assert scheduler.schedule("e-1", deadline) is True
    executions = started(client, arn)
    assert {name: given["remind_bucket"] for name, given in executions.items()} == ticks
    # each tick expires the bucket it is named after; its input follows from its name alone, so
    # every container (and every offering) starts the same execution
    assert all(given["bucket"].replace("-", "").replace(":", "")[:15] == name[4:] for name, given in executions.items())


def test_one_start_per_tick_whatever_the_holds_offerings_and_containers(sfn, monkeypatch):
    client, arn = sfn
    calls = []
    original = client.start_execution
    monkeypatch.setattr(client, "start_execution", lambda **kw: calls.append(kw["name"]) or original(**kw))
    first, second = (StepFunctionsHoldExpiryScheduler(arn, client, clock=lambda: NOW) for _ in range(2))   # two containers
    for n in range(50):   # 50 holds of 50 offerings due within one bucket
        assert first.schedule(f"e-{n}", f"2030-01-01T12:10:0{n % 4 + 1}.{n:03d}Z") is (n == 0)
    assert calls == ["exp-20300101T121005"]
    # Another container asks once (the same name and input: Step Functions answers with the running
    # execution, or ExecutionAlreadyExists once it ended: both mean it runs), then remembers.
    assert second.schedule("e-1", "2030-01-01T12:10:03.000Z") is True
    assert second.schedule("e-2", "2030-01-01T12:10:04.000Z") is False and len(calls) == 2
    assert first.schedule("e-1", "2030-01-01T12:10:05.001Z") is True    # the next bucket
    assert len(client.list_executions(stateMachineArn=arn)["executions"]) == 2


def test_a_reminder_tick_is_an_expiry_tick_of_an_earlier_bucket(sfn):
    """The tick that reminds bucket B is the one that expires bucket B - lead: one execution, not two."""
    client, arn = sfn
    scheduler = StepFunctionsHoldExpiryScheduler(arn, client, reminder_seconds=120, clock=lambda: NOW)
    scheduler.schedule("e-1", "2030-01-01T12:10:00.000Z")       # reminded by the 12:08:00 tick
    scheduler.schedule("e-2", "2030-01-01T12:08:00.000Z")       # expired by it
    executions = started(client, arn)
    assert sorted(executions) == ["exp-20300101T120600", "exp-20300101T120800", "exp-20300101T121000"]
    assert executions["exp-20300101T120800"] == {"bucket": "2030-01-01T12:08:00.000Z",
                                                 "remind_bucket": "2030-01-01T12:10:00.000Z", "index": "shards"}


def normal_path(definition: dict, outcomes: dict[str, str] | None = None) -> list[str]:
    """The states an execution enters when every task succeeds (a Choice takes the branch named in
    ``outcomes``, else its Default)."""
    states, name, entered = definition["States"], definition["StartAt"], []
    while True:
        entered.append(name)
        state = states[name]
        if state.get("End") or state["Type"] in ("Succeed", "Fail"):
            return entered
        name = (outcomes or {}).get(name) or state.get("Default") if state["Type"] == "Choice" else state["Next"]


def test_the_transitions_the_profile_charges_are_the_definitions_normal_paths():
    from devstack.measure.costs import TRANSITIONS_EXPIRY_TICK, TRANSITIONS_PER_EXECUTION

    tick = json.loads((REPO / "statemachines" / "hold_expiry.asl.json").read_text())
    assert normal_path(tick) == ["WaitUntilBucketEnds", "ExpireBucket", "CheckPayments", "RemindBucket"]
    assert len(normal_path(tick)) == TRANSITIONS_EXPIRY_TICK
    reconcile = json.loads((REPO / "statemachines" / "reconcile_payment.asl.json").read_text())
    assert len(normal_path(reconcile, {"IsSettled": "Settled"})) == TRANSITIONS_PER_EXECUTION


def test_first_reconciliation_checks_share_one_execution_per_bucket(sfn, monkeypatch):
    from holdfast.adapters.aws import ReconciliationBuckets, StepFunctionsReconciliationStarter

    client, arn = sfn
    calls = []
    original = client.start_execution
    monkeypatch.setattr(client, "start_execution", lambda **kw: calls.append(kw) or original(**kw))
    buckets = ReconciliationBuckets(StepFunctionsReconciliationStarter(arn, client), clock=lambda: NOW)
    for n in range(20):   # twenty payments started in the same moment: their first checks share a bucket
        buckets.start(f"b-{n}", "initial", 2)
    assert [c["name"] for c in calls] == ["rec-20300101T120005"]
    assert json.loads(calls[0]["input"]) == {"bucket": "2030-01-01T12:00:05.000Z", "wait_seconds": 5}
    buckets.start("b-1", "refund-cancelled", 2)   # any other watch: the booking's own execution
    assert calls[-1]["name"] == "pay-b-1-refund-cancelled"


def test_first_reconciliation_checks_ride_on_the_tick_of_their_bucket(sfn, monkeypatch):
    """Where the function may start ticks, a payment's first check costs no execution of its own:
    it starts (or finds) the tick that also expires the bucket's holds, with the tick's own input."""
    from holdfast.adapters.aws import ReconciliationBuckets, StepFunctionsReconciliationStarter

    client, arn = sfn
    calls = []
    original = client.start_execution
    monkeypatch.setattr(client, "start_execution", lambda **kw: calls.append(kw) or original(**kw))
    ticks = StepFunctionsHoldExpiryScheduler(arn, client, reminder_seconds=120, clock=lambda: NOW)
    buckets = ReconciliationBuckets(StepFunctionsReconciliationStarter(arn, client), clock=lambda: NOW, ticks=ticks)
    for n in range(20):
        buckets.start(f"b-{n}", "initial", 2)
    assert [c["name"] for c in calls] == ["exp-20300101T120005"]
    assert json.loads(calls[0]["input"]) == {"bucket": "2030-01-01T12:00:05.000Z",
                                             "remind_bucket": "2030-01-01T12:02:05.000Z", "index": "shards"}
    # a hold due in the same bucket, in this container: the tick is started already
    assert ticks.schedule("e-1", "2030-01-01T12:00:04.000Z") is False and len(calls) == 1
    buckets.start("b-1", "refund-cancelled", 2)   # any other watch: the booking's own execution
    assert calls[-1]["name"] == "pay-b-1-refund-cancelled"


@pytest.fixture
def store(fake_store):
    return fake_store


def test_a_hold_of_one_offering_expires_on_the_tick_another_offering_started(sfn, store, clock, catalog):
    """Sharing the tick must not leave anyone out: two offerings' holds due in one bucket start
    one tick (and one reminder tick) between them, and running each started tick as the state
    machine does (expire its bucket, remind the bucket it names) reminds and expires both."""
    import random

    from holdfast.domain.statuses import BookingStatus
    from holdfast.schemas import BookingIn
    from holdfast.services.bookings import BookingService
    from tests.unit.conftest import event_request

    client, arn = sfn
    scheduler = StepFunctionsHoldExpiryScheduler(arn, client, reminder_seconds=120, clock=clock)
    bookings = BookingService(store, clock, scheduler.schedule, rng=random.Random(7))
    first, second = (catalog.create_event(event_request())["event_id"] for _ in range(2))
    held = [bookings.create_booking(offering, f"c-{n}", f"k-{n}", BookingIn(quantity=1)).booking
            for n, offering in enumerate((first, second))]
    assert bucket_of(held[0].hold_expires_at) == bucket_of(held[1].hold_expires_at)
    ticks = started(client, arn)
    assert len(ticks) == 2   # the bucket's tick and the one that reminds it: per bucket, not per offering
    reminder_tick = next(given for given in ticks.values() if given["remind_bucket"] == bucket_of(held[0].hold_expires_at))
    assert set(store.bucket_booking_ids(reminder_tick["remind_bucket"])) == {b.booking_id for b in held}
    expiry_tick = next(given for given in ticks.values() if given["bucket"] == bucket_of(held[0].hold_expires_at))
    clock.advance((datetime.fromisoformat(expiry_tick["bucket"].replace("Z", "+00:00")) - clock()).total_seconds())
    assert bookings.expire_bucket(expiry_tick["bucket"])["expired"] == 2
    assert [store.get_booking(b.booking_id).status for b in held] == [BookingStatus.EXPIRED] * 2


def test_a_payments_first_check_starts_the_tick_of_the_bucket_its_stored_check_time_is_in(
        sfn, store, clock, catalog, provider, monkeypatch):
    """integration run A4 (docs/testing.md): a payment whose attempt took longer to store than the
    rest of its 5-second bucket started the NEXT bucket's tick, counted from the moment after the
    write, while its check was stored (and indexed) in the bucket before: that tick read its
    bucket without the check, and the check waited for the sweeper's minute."""
    import random

    from holdfast.adapters.aws import ReconciliationBuckets, StepFunctionsReconciliationStarter
    from holdfast.schemas import BookingIn
    from holdfast.services import payments as payments_module
    from holdfast.services.bookings import BookingService
    from holdfast.services.payments import PaymentService
    from tests.unit.conftest import event_request

    client, arn = sfn
    ticks = StepFunctionsHoldExpiryScheduler(arn, client, reminder_seconds=120, clock=clock)
    bookings = BookingService(store, clock, ticks.schedule, rng=random.Random(7))
    buckets = ReconciliationBuckets(StepFunctionsReconciliationStarter(arn, client), clock=clock, ticks=ticks)
    paying = PaymentService(store, provider, clock, bookings, "http://127.0.0.1:3000/done",
                            start_reconciliation=buckets.start)
    event_id = catalog.create_event(event_request())["event_id"]
    booking = bookings.create_booking(event_id, "ann", "k-1", BookingIn(quantity=1)).booking
    clock.advance(2.5 - clock().timestamp() % 5)   # half way through a bucket
    real_point = payments_module.crash_point

    def slow_write(name: str) -> None:   # the attempt's write answers 4 s after it was decided
        if name == "payment.after_storing_attempt":
            clock.advance(4)
        real_point(name)

    monkeypatch.setattr(payments_module, "crash_point", slow_write)
    before = set(started(client, arn))
    paying.start_payment(booking.booking_id, "ann", "pay-1")
    due = store.get_booking(booking.booking_id).payment.next_check_at
    new_ticks = [given for name, given in started(client, arn).items() if name not in before]
    assert [given["bucket"] for given in new_ticks] == [bucket_of(due)]
