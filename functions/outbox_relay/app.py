"""Outbox relay: each booking change event streamed from the table is published to the
notifications bus (the notifier records and sends it once, however often it is delivered), a new
hold gets its payment reminder execution, and every change that gave places back offers them to
the event's waitlist."""
from datetime import timedelta

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from holdfast import wiring
from holdfast.clock import iso, parse_iso, system_clock
from holdfast.config import settings
from holdfast.domain.statuses import HOLDING
from holdfast.faults import crash_point
from holdfast.observability import logger, tracer
from holdfast.services.notifications import bus_entry, record_outbox_event

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


@tracer.capture_method
def handle_record(record: DynamoDBRecord) -> None:
    image = record.dynamodb.new_image if record.dynamodb else None
    if not image:
        return
    crash_point("outbox.before_publish")
    bus = wiring.notifications_bus()
    if bus is not None:
        bus.publish(bus_entry(bus.name, image))
    else:
        record_outbox_event(wiring.store(), image)
    if image.get("status") == "HELD" and image.get("hold_expires_at"):
        schedule_reminder(image)
    offers = []
    if image.get("status") not in HOLDING and image.get("event_id"):
        # Expired, cancelled, failed, refunded: places may be free. Also closes paid offers (DONE).
        # Repeats are harmless: the offer's hold has a deterministic idempotency key.
        offers = wiring.waitlist().advance(str(image["event_id"]))
    logger.info("outbox event", extra={"type": image.get("type"), "published": bus is not None,
                                       "waitlist_offers": offers})


def schedule_reminder(image: dict) -> None:
    config = settings()
    if not config.hold_reminder_state_machine_arn or config.hold_reminder_seconds <= 0:
        return
    remind_at = parse_iso(str(image["hold_expires_at"])) - timedelta(seconds=config.hold_reminder_seconds)
    if remind_at <= system_clock():
        return  # a hold shorter than the reminder window gets no reminder
    from holdfast.adapters.aws import start_once

    import boto3
    start_once(boto3.client("stepfunctions"), config.hold_reminder_state_machine_arn,
               f"remind-{image['booking_id']}", {"booking_id": image["booking_id"], "remind_at": iso(remind_at)})


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event, context):
    return process_partial_response(event=event, record_handler=handle_record, processor=processor, context=context)
