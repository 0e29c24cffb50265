"""Reconciliation task: one check of a booking's payment or refund against the provider."""
from holdfast import wiring
from holdfast.faults import crash_point
from holdfast.observability import log_metrics, logger, tracer

wiring.cold_start(secret=True)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    logger.set_correlation_id(str(event.get("booking_id", "")))
    crash_point("reconcile.before_check")
    result = wiring.reconciliation().check(event["booking_id"])
    logger.info("reconciliation check", extra=result)
    return result
