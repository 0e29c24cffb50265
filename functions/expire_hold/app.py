"""Hold expiry task: called by the state machine once the hold's time is up."""
from holdfast import wiring
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import bookings as _bookings  # noqa: F401 - every invocation expires through it: loaded at init

wiring.cold_start()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    logger.set_correlation_id(str(event.get("booking_id", "")))
    result = wiring.bookings().expire(event["booking_id"])
    logger.info("hold expiry", extra=result)
    return result
