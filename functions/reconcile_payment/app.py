"""Reconciliation task: one check of a booking's payment or refund against the provider, or the
first check of every payment due in a time bucket (from the hold expiry tick, or a ``rec-`` execution)."""
from holdfast import wiring
from holdfast.faults import crash_point
from holdfast.observability import log_metrics, logger, tracer

wiring.cold_start(wiring.PROVIDER_SECRET, loads=("reconciliation",))  # every check uses it


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    if event.get("bucket"):   # the first check of every payment due in a bucket (adapters/aws.py)
        logger.set_correlation_id(f"rec/{event['bucket']}")
        starter = wiring.reconciliation_starter()
        result = wiring.reconciliation().check_bucket(str(event["bucket"]), starter.start if starter else None,
                                                      indexed=wiring.tick_indexed(event.get("tick")))
        logger.info("reconciliation bucket", extra=result)
        return result
    logger.set_correlation_id(str(event.get("booking_id", "")))
    crash_point("reconcile.before_check")
    result = {**wiring.reconciliation().check(event["booking_id"]), "bucket": ""}
    logger.info("reconciliation check", extra=result)
    return result
