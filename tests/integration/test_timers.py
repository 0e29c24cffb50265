"""Timers no other test here moved the clock past (docs/testing.md, "Every timer"): an SQS
message's visibility timeout after a crashed consumer, a waiting-room admission token's lifetime,
and the mail gate's hourly window. Each test moves the stack's clock past the timer and reads the
outcome once; the limits are the template's defaults (this package does not shorten them)."""
from __future__ import annotations

import uuid

import pytest

from holdfast import faults, wiring
from holdfast.clock import parse_iso, system_clock
from tests.support.flows import booked_and_paying, customer
from tests.support.template import template

pytestmark = pytest.mark.integration

TEMPLATE = template()
PAYMENT_EVENTS_VISIBILITY = int(TEMPLATE["Resources"]["PaymentEventsQueue"]["Properties"]["VisibilityTimeout"])
TOKEN_TTL = int(TEMPLATE["Parameters"]["AdmissionTokenTtlSeconds"]["Default"])
MAIL_PER_HOUR = int(TEMPLATE["Parameters"]["MailPerAddressPerHour"]["Default"])
PAYMENT_EVENTS_RECEIVES = int(TEMPLATE["Resources"]["PaymentEventsQueue"]["Properties"]["RedrivePolicy"]["maxReceiveCount"])


@pytest.fixture
def crash(monkeypatch):
    def arm(points: str) -> None:
        faults.reset_crash_counts()
        monkeypatch.setenv("HOLDFAST_CRASH_POINTS", points)
    yield arm
    faults.reset_crash_counts()


def _payment_events(stack):
    [poller] = [p for p in stack.pollers.values() if getattr(p, "queue_name", "").endswith("-payment-events.fifo")]
    return poller


def test_a_notification_whose_consumer_crashed_returns_after_the_visibility_timeout(api, sandbox, system, crash):
    """The consumer applies the payment and dies before it can report the message done: the
    message stays in flight for the queue's visibility timeout (180 s), then comes back, and its
    second delivery changes nothing (one confirmation, one message to the customer)."""
    stack = system["stack"]
    poller = _payment_events(stack)
    event = api.create_event(capacity=1)
    who = customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    crash("consumer.after_applying:1")
    sandbox.pay(payment_id)
    stack.wait_idle()
    assert faults.crash_count("consumer.after_applying") == 1
    # counted on this payment's own message: other tests' late notifications on the shared stack
    # may be in the queue too
    assert _receives_of(poller, payment_id) == 1                        # not deleted: it will come back
    assert api.booking(booking_id, who)["status"] == "CONFIRMED"        # applied before the crash

    stack.advance_clock(PAYMENT_EVENTS_VISIBILITY - 10)
    assert _receives_of(poller, payment_id) == 1                        # still in flight

    stack.advance_clock(20)
    # delivered again, and done: a message leaves the queue only when a consumer deletes it (the
    # crash was once; the dead-letter queue takes it only after five receives)
    assert _receives_of(poller, payment_id) is None
    journal = [entry["action"] for entry in api.booking(booking_id, who)["journal"]]
    assert journal.count("payment_succeeded") == 1, journal
    kinds = [n["type"] for n in wiring.store().list_notifications(who)]
    assert kinds.count("booking.confirmed") == 1, kinds


def _receives_of(poller, payment_id: str) -> int | None:
    """How many times the payment-events queue has handed out the message about this payment (None
    once it has left the queue): counted on the message itself, so that other tests' late
    notifications arriving meanwhile on the shared stack do not count."""
    from moto.sqs import models as sqs_models

    for account in list(sqs_models.sqs_backends.keys()):
        for backend in list(sqs_models.sqs_backends[account].values()):
            queue = backend.queues.get(poller.queue_name)
            for message in list(getattr(queue, "_messages", ()) or ()):
                if payment_id in message.body:
                    return message.approximate_receive_count
    return None


def test_a_notification_whose_consumer_always_crashes_goes_to_the_dead_letter_queue_after_five_receives(
        api, sandbox, system, crash):
    """The payment-events queue's redrive (maxReceiveCount 5, each receive a visibility timeout
    apart): a notification whose consumer dies every time is received five times, then moved to
    the dead-letter queue (where PaymentEventsDeadLetterAlarm looks) instead of a sixth delivery."""
    stack = system["stack"]
    poller = _payment_events(stack)
    sqs = stack.boto3_client("sqs")
    dead_url = sqs.get_queue_url(QueueName=poller.queue_name.replace("-payment-events.fifo",
                                                                     "-payment-events-dlq.fifo"))["QueueUrl"]
    event = api.create_event(capacity=1)
    who = customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    crash("consumer.after_applying")                                   # every delivery dies
    sandbox.pay(payment_id)
    stack.wait_idle()
    assert _receives_of(poller, payment_id) == 1
    for receive in range(2, PAYMENT_EVENTS_RECEIVES + 1):
        stack.advance_clock(PAYMENT_EVENTS_VISIBILITY + 1)
        assert _receives_of(poller, payment_id) == receive            # one more delivery a timeout
    assert api.booking(booking_id, who)["status"] == "CONFIRMED"      # applied at the first

    stack.advance_clock(PAYMENT_EVENTS_VISIBILITY + 1)
    assert _receives_of(poller, payment_id) is None                   # left the queue, no sixth delivery
    dead = sqs.receive_message(QueueUrl=dead_url, MaxNumberOfMessages=10, AttributeNames=["All"])
    mine = [m for m in dead.get("Messages", []) if payment_id in m["Body"]]
    assert len(mine) == 1 and int(mine[0]["Attributes"]["ApproximateReceiveCount"]) >= PAYMENT_EVENTS_RECEIVES
    sqs.delete_message(QueueUrl=dead_url, ReceiptHandle=mine[0]["ReceiptHandle"])
    journal = [entry["action"] for entry in api.booking(booking_id, who)["journal"]]
    assert journal.count("payment_succeeded") == 1, journal            # applied once, five deliveries


def _admitted(api, event_id: str, who: str) -> dict:
    status = api.request("GET", f"/events/{event_id}/queue", customer=who)
    assert status.status_code == 200, status.text
    return status.json()


def _hold(api, event_id: str, who: str, token: str):
    return api.request("POST", f"/events/{event_id}/bookings", customer=who, key=str(uuid.uuid4()),
                       json={"quantity": 1}, headers={"X-Admission-Token": token})


def test_an_admission_token_lapses_when_the_clock_passes_its_lifetime(api, system):
    """AdmissionTokenTtlSeconds (300 s by default) from the admission: a token used before then
    holds places; one used after is refused (admission_token_expired) and the queue says expired."""
    stack = system["stack"]
    event = api.create_event(capacity=4, high_demand=True)
    event_id = event["event_id"]
    early, late = customer(), customer()
    for who in (early, late):
        joined = api.request("POST", f"/events/{event_id}/queue", customer=who)
        assert joined.status_code == 200, joined.text
    stack.advance_clock(5)   # the room admits five a second
    tokens = {}
    for who in (early, late):
        admitted = _admitted(api, event_id, who)
        assert admitted["status"] == "admitted", admitted
        tokens[who] = admitted
    lifetime = parse_iso(tokens[late]["token_expires_at"]) - system_clock()
    assert TOKEN_TTL - 10 <= lifetime.total_seconds() <= TOKEN_TTL

    stack.advance_clock(lifetime.total_seconds() - 5)
    held = _hold(api, event_id, early, tokens[early]["admission_token"])
    assert held.status_code == 201, held.text

    stack.advance_clock(10)
    refused = _hold(api, event_id, late, tokens[late]["admission_token"])
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "admission_token_expired", refused.text
    assert _admitted(api, event_id, late)["status"] == "expired"
    assert api.counts(event_id) == {"available": 3, "held": 1, "sold": 0}


def test_the_mail_limit_counts_an_hour_and_the_next_hour_sends_again(api, system):
    """MailPerAddressPerHour (10 by default): the eleventh message to one address in a clock hour
    is recorded rate_limited, not sent; once the clock passes into the next hour, the next is sent."""
    stack = system["stack"]
    now = system_clock()
    # start a minute into an hour on the stack's clock, so the messages all fall in one hour
    stack.advance_clock(3600 - (now.minute * 60 + now.second + now.microsecond / 1e6) + 60)
    address = f"busy-{uuid.uuid4().hex[:8]}@example.org"
    event = api.create_event(capacity=MAIL_PER_HOUR + 5, hold_ttl_seconds=3 * 3600)   # no expiry mail meanwhile

    def hold() -> tuple[str, str]:
        # each a signed-in customer whose own address it is (no confirmation): one message per hold
        who = customer()
        answer = api.request("POST", f"/events/{event['event_id']}/bookings", customer=who, key=str(uuid.uuid4()),
                             json={"quantity": 1}, headers={"X-Customer-Email": address})
        assert answer.status_code == 201, answer.text
        return who, answer.json()["booking_id"]

    def delivery(who: str, booking_id: str) -> str:
        [note] = [n for n in wiring.store().list_notifications(who)
                  if n["booking_id"] == booking_id and n["type"] == "booking.held"]
        return note["delivery"]

    held = [hold() for _ in range(MAIL_PER_HOUR + 1)]
    stack.wait_idle()
    deliveries = [delivery(*h) for h in held]   # the notifier's order, not the holds': any one is the eleventh
    assert sorted(deliveries) == ["rate_limited"] + ["sent"] * MAIL_PER_HOUR, deliveries
    limited = held[deliveries.index("rate_limited")]

    stack.advance_clock(3600)   # the next hour on the stack's clock
    assert delivery(*limited) == "rate_limited"   # a held-back message is never sent later
    later = hold()
    stack.wait_idle()
    assert delivery(*later) == "sent"


def test_a_customers_rate_window_refills_as_the_clock_moves(api, system):
    """The per-customer limits are a rate on the clock (GCRA): QueueRatePerMinute=20 with a burst
    of two here (conftest), so a third request at once is refused with Retry-After, and once the
    clock has moved that long the next is let through."""
    stack = system["stack"]
    event_id = api.create_event(capacity=5, high_demand=True)["event_id"]
    who = customer()
    assert api.request("POST", f"/events/{event_id}/queue", customer=who).status_code == 200
    assert api.request("GET", f"/events/{event_id}/queue", customer=who).status_code == 200
    refused = api.request("GET", f"/events/{event_id}/queue", customer=who)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited", refused.text
    wait = int(refused.headers["Retry-After"])
    assert 1 <= wait <= 3
    stack.advance_clock(wait)
    assert api.request("GET", f"/events/{event_id}/queue", customer=who).status_code == 200


def test_code_tries_are_counted_per_clock_minute(api, system):
    """Ten codes a minute a customer may try (domain/codes.py); the eleventh in the same minute is
    refused, and in the next minute on the stack's clock trying is allowed again."""
    stack = system["stack"]
    now = system_clock()
    stack.advance_clock(60 - now.second - now.microsecond / 1e6 + 1)   # a second into a minute
    event_id = api.create_event(capacity=5)["event_id"]
    guesser = customer()

    def guess(n: int) -> str:
        answer = api.book(event_id, guesser, {"quantity": 1, "code": f"GUESS{n}"})
        assert answer.status_code in (400, 429), answer.text
        return answer.json()["error"]["code"]

    assert [guess(n) for n in range(10)] == ["invalid_code"] * 10
    assert guess(10) == "too_many_code_tries"
    stack.advance_clock(60)
    assert guess(11) == "invalid_code"
