"""Small AWS adapters: hold expiry executions, the payment events queue, the shared secret."""
from __future__ import annotations

import hashlib
import json
import math
import time
from datetime import timedelta
from typing import Any

import boto3
from botocore.exceptions import ClientError

from ..clock import Clock, iso, parse_iso, system_clock
from .expiry_buckets import INDEXED, bucket_of, bucket_stamp, execution_name, reminder_lead, shifted
from ..observability import logger
from ..ports import Message


def start_once(client: Any, state_machine_arn: str, name: str, payload: dict[str, Any]) -> bool:
    """Start a named execution; False if one of that name exists already (so a repeat is a no-op)."""
    try:
        client.start_execution(stateMachineArn=state_machine_arn, name=name[:80], input=json.dumps(payload))
        return True
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ExecutionAlreadyExists":
            return False
        raise


class StepFunctionsHoldExpiryScheduler:
    """Starts the ticks a hold needs (adapters/expiry_buckets.py): the one of its bucket, which
    expires it, and, while that moment is still ahead, the one ``reminder_lead`` earlier, which
    reminds it. A tick is the platform's, shared by every offering's holds (and by the first
    reconciliation checks due in its bucket, ReconciliationBuckets), so a quiet sale's booking
    shares its executions with the rest of the platform's. The name is the bucket's and the input
    follows from it, so a second start anywhere is answered with the running execution or
    ``ExecutionAlreadyExists`` (success either way: it runs), and each container remembers the
    ticks it started, so a busy container calls Step Functions about twice per bucket."""

    REMEMBERED = 10_000

    def __init__(self, state_machine_arn: str, client: Any | None = None, *, reminder_seconds: int = 0,
                 clock: Clock = system_clock) -> None:
        self.arn = state_machine_arn
        self.client = client or boto3.client("stepfunctions")
        self.lead = reminder_lead(reminder_seconds)
        self.clock = clock
        self.started: set[str] = set()

    def tick_input(self, tick: str) -> dict[str, str]:
        """What the tick of ``tick`` does: expire that bucket, then remind the one ``lead`` later,
        reading only the shards the buckets' markers name (``index``; expiry_buckets.py)."""
        return {"bucket": tick, "remind_bucket": shifted(tick, self.lead) if self.lead else "", "index": INDEXED}

    def start_tick(self, tick: str) -> bool:
        """Start the tick of one bucket, once per container; True when Step Functions was asked."""
        if tick in self.started:
            return False
        start_once(self.client, self.arn, execution_name(tick), self.tick_input(tick))
        if len(self.started) >= self.REMEMBERED:
            self.started.clear()
        self.started.add(tick)
        return True

    def schedule(self, event_id: str, hold_expires_at: str) -> bool:
        """True when Step Functions was asked (the ticks started, or were found running or ended:
        either way they are there); False when this container had already asked for both."""
        bucket = bucket_of(hold_expires_at)
        ticks = [bucket]
        if self.lead and parse_iso(shifted(bucket, -self.lead)) > self.clock():
            ticks.append(shifted(bucket, -self.lead))   # a hold shorter than the window gets no reminder
        return any([self.start_tick(tick) for tick in ticks])


class StepFunctionsReconciliationStarter:
    """Starts a reconciliation execution for a booking; the name (booking and a tag) makes a
    repeated start with the same tag a no-op."""

    def __init__(self, state_machine_arn: str, client: Any | None = None) -> None:
        self.arn = state_machine_arn
        self.client = client or boto3.client("stepfunctions")

    def start(self, booking_id: str, tag: str, wait_seconds: float = 0) -> bool:
        return start_once(self.client, self.arn, f"pay-{booking_id}-{tag}",
                          {"booking_id": booking_id, "wait_seconds": max(0, math.ceil(wait_seconds))})


class ReconciliationBuckets:
    """The first check of every new payment, batched: it rides on the platform's expiry tick of
    the bucket its first-check time falls in (``ticks``; the tick checks every payment due in its
    bucket through the ``DUE#`` index), and only a payment still unsettled then gets an execution
    of its own for the later checks. Without ``ticks`` (a function not given the hold expiry state
    machine), one reconciliation execution per bucket (``rec-<bucket>``) does the same. Any other
    watch (a refund, a sweeper restart) starts its own execution as before. Each container asks
    Step Functions once per bucket."""

    REMEMBERED = 10_000

    def __init__(self, starter: StepFunctionsReconciliationStarter, clock: Clock = system_clock,
                 ticks: StepFunctionsHoldExpiryScheduler | None = None) -> None:
        self.starter = starter
        self.clock = clock
        self.ticks = ticks
        self.started: set[str] = set()

    def start(self, booking_id: str, tag: str, wait_seconds: float = 0) -> bool:
        if tag != "initial":
            return self.starter.start(booking_id, tag, wait_seconds)
        now = self.clock()
        bucket = bucket_of(iso(now + timedelta(seconds=wait_seconds)))   # (a fraction: to the stored check time)
        if self.ticks is not None:
            return self.ticks.start_tick(bucket)
        if bucket in self.started:
            return False
        wait = max(0, math.ceil((parse_iso(bucket) - now).total_seconds()))
        start_once(self.starter.client, self.starter.arn, "rec-" + bucket_stamp(bucket),
                   {"bucket": bucket, "wait_seconds": wait})
        if len(self.started) >= self.REMEMBERED:
            self.started.clear()
        self.started.add(bucket)
        return True


class StepFunctionsCancellationJobs:
    """The executions of event cancellation jobs: ``cancel-<event>-<n>``, one name per attempt, so a
    repeated start is a no-op and a resumed job gets a name of its own."""

    def __init__(self, state_machine_arn: str, client: Any | None = None) -> None:
        self.arn = state_machine_arn
        self.client = client or boto3.client("stepfunctions")

    @staticmethod
    def name(event_id: str, attempt: int) -> str:
        return f"cancel-{event_id}-{attempt}"

    def start(self, event_id: str, attempt: int, reason: str) -> bool:
        return start_once(self.client, self.arn, self.name(event_id, attempt),
                          {"event_id": event_id, "reason": reason, "after": "", "pass": 1})

    def state(self, event_id: str, attempt: int) -> str | None:
        """RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED; None if it was never started."""
        execution = self.arn.replace(":stateMachine:", ":execution:", 1) + ":" + self.name(event_id, attempt)[:80]
        try:
            return str(self.client.describe_execution(executionArn=execution)["status"])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ExecutionDoesNotExist":
                return None
            raise


class SqsPaymentEventsQueue:
    """The FIFO queue between the webhook and the consumer: grouped by payment, de-duplicated by
    (event, object id, status) so a redelivered notification within five minutes is dropped."""

    def __init__(self, queue_url: str, client: Any | None = None) -> None:
        self.url = queue_url
        self.client = client or boto3.client("sqs")

    def enqueue(self, *, event: str, object_id: str, status: str, payment_id: str) -> str:
        dedup = hashlib.sha256(f"{event}|{object_id}|{status}".encode()).hexdigest()
        self.client.send_message(
            QueueUrl=self.url,
            MessageBody=json.dumps({"event": event, "object_id": object_id, "status": status, "payment_id": payment_id}),
            MessageGroupId=payment_id,
            MessageDeduplicationId=dedup,
        )
        return dedup


#: How long a read secret is reused (a rotated secret reaches every warm container within this).
SECRET_MAX_AGE_SECONDS = 300.0
_secrets: dict[str, tuple[float, dict[str, str]]] = {}
#: one Secrets Manager client for every secret a container reads: a function that checks three
#: secrets at its start builds one client, not three (issue 49)
_secrets_client: list[Any] = []


def read_secret(name: str) -> dict[str, str]:
    """The JSON secret shared by the functions, cached for five minutes per process.

    A plain GetSecretValue rather than Powertools' parameters utility: that utility's import (its
    providers and transforms) was a measurable share of every cold start that checks the secret."""
    now = time.monotonic()
    cached = _secrets.get(name)
    if cached is not None and now - cached[0] < SECRET_MAX_AGE_SECONDS:
        return cached[1]
    if not _secrets_client:
        _secrets_client.append(boto3.client("secretsmanager"))
    answer = _secrets_client[0].get_secret_value(SecretId=name)
    try:
        value = json.loads(answer["SecretString"])
    except (KeyError, ValueError):
        raise RuntimeError(f"secret {name} must be a JSON object") from None
    if not isinstance(value, dict):
        raise RuntimeError(f"secret {name} must be a JSON object")
    _secrets[name] = (now, value)
    return value


def clear_secret_cache() -> None:
    """Forget every read secret and the client that read them (tests and the local stack change
    them, and the endpoint, under a running process; a SnapStart restore reads them anew)."""
    _secrets.clear()
    _secrets_client.clear()


class NotificationsBus:
    """PutEvents to the notifications bus. A rejected entry is reported so that its stream record
    is retried (the notifier de-duplicates, so a repeat costs nothing)."""

    MAX_ENTRIES = 10  # PutEvents' limit per call

    def __init__(self, bus_name: str, client: Any | None = None) -> None:
        self.name = bus_name
        self.client = client or boto3.client("events")

    def publish_many(self, entries: list[dict[str, Any]]) -> list[int]:
        """Send up to ten entries in one call; return the positions of those the bus rejected."""
        if len(entries) > self.MAX_ENTRIES:
            raise ValueError(f"at most {self.MAX_ENTRIES} entries per PutEvents call")
        if not entries:
            return []
        answer = self.client.put_events(Entries=entries)
        if not answer.get("FailedEntryCount"):
            return []
        rejected = [i for i, result in enumerate(answer.get("Entries") or []) if result.get("ErrorCode")]
        logger.warning("PutEvents rejected entries", extra={
            "rejected": len(rejected), "codes": sorted({answer["Entries"][i]["ErrorCode"] for i in rejected})})
        return rejected or list(range(len(entries)))


class SesEmailSender:
    """Sends a message through SES v2 from a verified identity, under the configuration set whose
    bounce and complaint events feed the suppression list. A text-only message goes as SES's simple
    content; one with HTML or files (a calendar entry, a QR image) as a MIME message of our own, so
    its text and HTML alternatives reach every reader, and every store of sent mail, as written."""

    def __init__(self, sender: str, client: Any | None = None, configuration_set: str = "") -> None:
        self.sender = sender
        self.client = client or boto3.client("sesv2")
        self.configuration_set = configuration_set

    def send(self, to: str, message: Message) -> str:
        if message.html or message.attachments or message.inline:
            content: dict[str, Any] = {"Raw": {"Data": mime_bytes(self.sender, to, message)}}
        else:
            content = {"Simple": {"Subject": {"Data": message.subject, "Charset": "UTF-8"},
                                  "Body": {"Text": {"Data": message.text, "Charset": "UTF-8"}}}}
        answer = self.client.send_email(FromEmailAddress=self.sender, Destination={"ToAddresses": [to]},
                                        Content=content,
                                        **({"ConfigurationSetName": self.configuration_set}
                                           if self.configuration_set else {}))
        return str(answer.get("MessageId", ""))


def mime_bytes(sender: str, to: str, message: Message) -> bytes:
    """multipart/mixed: the text and HTML alternatives (the HTML with its inline images as a
    related part, named by ``cid:``), then the attachments as files."""
    from email.message import EmailMessage
    from email.policy import SMTP

    mail = EmailMessage(policy=SMTP)
    mail["From"], mail["To"], mail["Subject"] = sender, to, message.subject
    mail.set_content(message.text)
    if message.html:
        mail.add_alternative(message.html, subtype="html")
        html = mail.get_payload()[-1]
        for part in message.inline:
            main, sub = _content_type(part.content_type)[:2]
            html.add_related(part.data, main, sub, cid=f"<{part.name}>", filename=part.name)
    for part in message.attachments:
        main, sub, params = _content_type(part.content_type)
        mail.add_attachment(part.data, main, sub, filename=part.name, params=params)
    return mail.as_bytes()


def _content_type(value: str) -> tuple[str, str, dict[str, str]]:
    kind, *rest = (piece.strip() for piece in value.split(";"))
    main, _, sub = kind.partition("/")
    return main, sub, dict(piece.partition("=")[::2] for piece in rest if "=" in piece)
