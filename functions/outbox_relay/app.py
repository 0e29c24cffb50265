"""Outbox relay: the booking change events streamed from the table are published to the
notifications bus (the notifier records and sends each once, however often it is delivered), and
every change that gave places back offers them to the event's waitlist. (A hold's payment reminder
is sent by its own expiry execution.)

A batch is handled as a batch: the events go out in PutEvents calls of up to ten entries, and
each event's waitlist is looked at once however many of its bookings changed. A record that could
not be handled is reported alone (``batchItemFailures``): the stream delivers it and the records
after it again, and every step is safe to repeat (the notifier de-duplicates, the waitlist
offers have deterministic keys)."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBStreamEvent

from holdfast import wiring
from holdfast.domain.statuses import HOLDING
from holdfast.faults import crash_point
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services.notifications import NOT_FOR_CUSTOMERS, bus_entry, notify

wiring.cold_start()

PUT_EVENTS_LIMIT = 10  # entries per PutEvents call


@tracer.capture_method
def relay(changes: list[tuple[str, dict[str, Any]]]) -> set[str]:
    """Handle (sequence number, outbox image) pairs; return the sequence numbers that failed."""
    failed: set[str] = set()
    ready = []
    for sequence, image in changes:
        try:
            crash_point("outbox.before_publish")
        except Exception:  # noqa: BLE001 - reported for this record only
            logger.exception("outbox record failed before publishing", extra={"sequence": sequence})
            failed.add(sequence)
            continue
        ready.append((sequence, image))
    failed |= publish(ready)
    failed |= offer_released_places(ready)
    return failed


def publish(changes: list[tuple[str, dict[str, Any]]]) -> set[str]:
    bus = wiring.notifications_bus()
    failed: set[str] = set()
    if bus is None:  # no bus configured: the relay records the notifications itself
        for sequence, image in changes:
            try:
                record_notifications(image)
            except Exception:  # noqa: BLE001
                logger.exception("notification not recorded", extra={"booking_id": image.get("booking_id")})
                failed.add(sequence)
        return failed
    for start in range(0, len(changes), PUT_EVENTS_LIMIT):
        chunk = changes[start:start + PUT_EVENTS_LIMIT]
        try:
            rejected = bus.publish_many([bus_entry(bus.name, image) for _, image in chunk])
        except Exception:  # noqa: BLE001 - the whole call failed: every record in it is retried
            logger.exception("PutEvents failed", extra={"entries": len(chunk)})
            rejected = list(range(len(chunk)))
        failed.update(chunk[i][0] for i in rejected)
    return failed


def record_notifications(image: dict[str, Any]) -> None:
    """What the notifier would do with the event, done here: an ``event.changed`` fans out to the
    event's customers, any other change is one notification."""
    if image.get("type") == "event.changed":
        from holdfast.services.event_announcements import event_changed   # a venue change: rare, loaded then

        event_changed(wiring.store(), image)
    elif image.get("type") == "contact.confirmed":
        return   # nothing was held back without a sender (the notifier's part, with a bus)
    else:
        notify(wiring.store(), image)


def offer_released_places(changes: list[tuple[str, dict[str, Any]]]) -> set[str]:
    """Expired, cancelled, failed, refunded (or any change out of a holding state): places may be
    free, and a paid offer is done. Each event's waitlist is advanced once for the whole batch; if
    that fails, every record of the event is retried."""
    by_event: dict[str, list[str]] = defaultdict(list)
    for sequence, image in changes:
        # (an event's own announcements, event.changed, carry no booking and free no places)
        # (a fact for the organizer's systems, a ticket checked in, frees nothing either)
        if image.get("booking_id") and image.get("status") not in HOLDING and image.get("event_id") \
                and image.get("type") not in NOT_FOR_CUSTOMERS:
            by_event[str(image["event_id"])].append(sequence)
            # an exchange gave back places of the offering it left too
            if image.get("released_event_id") and image["released_event_id"] != image["event_id"]:
                by_event[str(image["released_event_id"])].append(sequence)
    failed: set[str] = set()
    for event_id, sequences in by_event.items():
        try:
            offers = wiring.waitlist().advance(event_id)
        except Exception:  # noqa: BLE001
            logger.exception("waitlist not advanced", extra={"event_id": event_id})
            failed.update(sequences)
            continue
        if offers:
            logger.info("waitlist offers", extra={"event_id": event_id, "offers": offers})
    return failed


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    changes = []
    for record in DynamoDBStreamEvent(event).records:
        image = record.dynamodb.new_image if record.dynamodb else None
        if image:
            changes.append((record.dynamodb.sequence_number, image))
    failed = relay(changes)
    logger.info("outbox batch", extra={"records": len(changes), "failed": len(failed),
                                       "types": dict(Counter(str(image.get("type")) for _, image in changes))})
    return {"batchItemFailures": [{"itemIdentifier": sequence} for sequence, _ in changes if sequence in failed]}
