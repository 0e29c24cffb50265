"""Hold expiry task, called by the state machine: every unpaid hold of an expiry bucket once the
bucket's end has passed (``event_id`` and ``bucket``), or one hold (``booking_id``: executions
started before buckets existed)."""
from holdfast import wiring
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import bookings as _bookings  # noqa: F401 - every invocation expires through it: loaded at init

wiring.cold_start()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    if "booking_id" not in event:
        logger.set_correlation_id(f"{event['event_id']}/{event['bucket']}")
        result = wiring.bookings().expire_bucket(str(event["event_id"]), str(event["bucket"]))
        logger.info("hold expiry bucket", extra=result)
        return result
    logger.set_correlation_id(str(event.get("booking_id", "")))
    result = wiring.bookings().expire(event["booking_id"])
    logger.info("hold expiry", extra=result)
    return result
