"""Reconciliation task: one check of a booking's payment or refund against the provider."""
from holdfast import wiring
from holdfast.faults import crash_point
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import reconciliation as _reconciliation  # noqa: F401 - every check uses it: loaded at init

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
