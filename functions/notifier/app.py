"""Notifier: the notifications service's consumer.

* SQS batches from the notifications queue (the bus's rule target): each message is an
  EventBridge event whose detail is one outbox event; it becomes one notification (recorded once,
  emailed through SES when configured and the mail policy allows). Failed messages return to the
  queue (partial batch).
  An ``event.changed`` detail (a change of start time or venue) becomes one notification for each
  customer holding places of the event (services/event_announcements.py). A ``contact.confirmed``
  detail (a customer confirmed an address) sends the messages held for that address whose booking
  has not changed since (services/notifications.py ``deliver_held``).
* ``{"remind_bucket": {"bucket"}}`` from the hold expiry state machine's tick: for each hold of
  the bucket still unpaid, whatever its offering, the "your hold ends soon" reminder, once (an empty
  bucket: reminders are off; with ``event_id``: one offering's bucket, for executions started
  before ticks were shared; ``{"remind_booking_id"}``: one hold, from before buckets existed).
"""
import json


from holdfast import wiring
from holdfast.domain.statuses import BookingStatus
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.sqs_batch import SqsMessage, process_batch
from holdfast.services.event_announcements import event_changed
from holdfast.services.notifications import NOT_FOR_CUSTOMERS, BatchReads, deliver_held, log_sent, notify

wiring.cold_start()


def batch_reads(event: dict) -> object:
    """The batch's bookings, offerings and notification records in one read (BatchReads); if that
    read fails, each message reads for itself as before."""
    details = []
    for record in event.get("Records") or []:
        try:
            details.append(json.loads(record.get("body") or "{}").get("detail") or {})
        except (ValueError, AttributeError):
            continue   # handle_record reports it
    try:
        return BatchReads(wiring.store(), [d for d in details if isinstance(d, dict)])
    except Exception:  # noqa: BLE001 - an optimisation only
        logger.exception("batch reads failed; reading per message")
        return wiring.store()


@tracer.capture_method
def handle_record(record: SqsMessage, store=None) -> None:
    store = store if store is not None else wiring.store()
    envelope = json.loads(record.body)
    detail = envelope.get("detail") or {}
    if detail.get("type") == "event.changed" and detail.get("event_id"):
        sent = event_changed(wiring.store(), detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate())
        logger.info("event change announced", extra={"event_id": detail["event_id"], "notified": sent})
        return
    if detail.get("type") == "contact.confirmed":
        sent = deliver_held(wiring.store(), detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate())
        logger.info("held messages delivered to a confirmed address", extra={"sent": sent})
        return
    if detail.get("type") in NOT_FOR_CUSTOMERS:   # a fact for the organizer's webhooks (a case opened)
        return
    if not detail.get("booking_id") or not detail.get("customer_id"):
        logger.warning("not a booking change; dropped", extra={"detail_type": envelope.get("detail-type")})
        return
    log_sent(detail, notify(store, detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate()))


def _reminder(booking) -> dict:
    detail = {"type": "booking.hold_expiring", "booking_id": booking.booking_id, "customer_id": booking.customer_id,
              "event_id": booking.event_id, "status": booking.status.value, "hold_expires_at": booking.hold_expires_at,
              "version": booking.version}
    if booking.contact_email:
        detail["contact_email"] = booking.contact_email
        if booking.contact_own:
            detail["contact_own"] = True
    return detail


def remind(booking_id: str) -> dict:
    booking = wiring.store().get_booking(booking_id)
    if booking is None or booking.status is not BookingStatus.HELD:
        return {"booking_id": booking_id, "reminded": False}
    detail = _reminder(booking)
    # the booking just read goes with it: the offering and the record come in one more read
    reads = BatchReads(wiring.store(), [detail], [booking])
    sent = notify(reads, detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate())
    log_sent(detail, sent)
    return {"booking_id": booking_id, "reminded": sent}


#: a bucket's holds reminded per read: 3 keys each (booking, offering, record) within BatchGetItem's 100
REMIND_CHUNK = 32


def remind_all(booking_ids: list[str]) -> int:
    """The reminders of a bucket's holds still unpaid: per chunk one read of the bookings, then one
    of their offerings and records (BatchReads), instead of four reads per hold."""
    store, reminded = wiring.store(), 0
    for start in range(0, len(booking_ids), REMIND_CHUNK):
        held = [b for b in store.get_bookings(booking_ids[start:start + REMIND_CHUNK]) if b.status is BookingStatus.HELD]
        details = [_reminder(booking) for booking in held]
        reads = BatchReads(store, details, held) if details else store
        for detail in details:
            sent = notify(reads, detail, wiring.email_sender(), wiring.message_site(), wiring.mail_gate())
            log_sent(detail, sent)
            reminded += sent
    return reminded


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
        ids = wiring.store().bucket_booking_ids(str(bucket["bucket"]), str(bucket.get("event_id") or "") or None,
                                                indexed=wiring.tick_indexed(bucket.get("tick")))
        return {"reminded": remind_all(ids)}
    store = batch_reads(event)
    return process_batch(event, lambda record: handle_record(record, store))
