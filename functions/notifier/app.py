"""Notifier: the notifications service's consumer.

* SQS batches from the notifications queue (the bus's rule target): each message is an
  EventBridge event whose detail is one outbox event; it becomes one notification (recorded once,
  emailed through SES when configured and the mail policy allows). Failed messages return to the
  queue (partial batch).
  An ``event.changed`` detail (a change of start time or venue) becomes one notification for each
  customer holding places of the event (services/event_announcements.py).
* ``{"remind_bucket": {"bucket"}}`` from the hold expiry state machine's tick: for each hold of
  the bucket still unpaid, whatever its offering, the "your hold ends soon" reminder, once (an empty
  bucket: reminders are off; with ``event_id``: one offering's bucket, for executions started
  before ticks were shared; ``{"remind_booking_id"}``: one hold, from before buckets existed).
"""
import json


from holdfast import wiring
from holdfast.domain.statuses import BookingStatus
from holdfast.observability import log_metrics, logger, tracer
from holdfast.sqs_batch import SqsMessage, process_batch
from holdfast.services.event_announcements import announce
from holdfast.services.notifications import log_sent, notify

wiring.cold_start()


@tracer.capture_method
def handle_record(record: SqsMessage) -> None:
    envelope = json.loads(record.body)
    detail = envelope.get("detail") or {}
    if detail.get("type") == "event.changed" and detail.get("event_id"):
        sent = announce(wiring.store(), detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate())
        logger.info("event change announced", extra={"event_id": detail["event_id"], "notified": sent})
        return
    if not detail.get("booking_id") or not detail.get("customer_id"):
        logger.warning("not a booking change; dropped", extra={"detail_type": envelope.get("detail-type")})
        return
    log_sent(detail, notify(wiring.store(), detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate()))


def remind(booking_id: str) -> dict:
    booking = wiring.store().get_booking(booking_id)
    if booking is None or booking.status is not BookingStatus.HELD:
        return {"booking_id": booking_id, "reminded": False}
    detail = {"type": "booking.hold_expiring", "booking_id": booking_id, "customer_id": booking.customer_id,
              "event_id": booking.event_id, "status": booking.status.value, "hold_expires_at": booking.hold_expires_at,
              "version": booking.version}
    if booking.contact_email:
        detail["contact_email"] = booking.contact_email
    sent = notify(wiring.store(), detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate())
    log_sent(detail, sent)
    return {"booking_id": booking_id, "reminded": sent}


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    if "remind_booking_id" in event:
        return remind(str(event["remind_booking_id"]))
    if "remind_bucket" in event:   # a tick's reminder step: every unpaid hold of the bucket it names
        bucket = event["remind_bucket"]
        if not bucket.get("bucket"):   # reminders are off
            return {"reminded": 0}
        ids = wiring.store().bucket_booking_ids(str(bucket["bucket"]), str(bucket.get("event_id") or "") or None)
        return {"reminded": sum(1 for booking_id in ids if remind(booking_id)["reminded"])}
    return process_batch(event, handle_record)
