"""Reconciliation task: one check of a booking's payment or refund against the provider, or the
first check of every payment due in a time bucket (from the hold expiry tick, or a ``rec-`` execution)."""
import time

from holdfast import wiring
from holdfast.adapters.expiry_buckets import BUCKET_SECONDS
from holdfast.faults import crash_point
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import reconciliation as _reconciliation  # noqa: F401 - every check uses it: loaded at init

wiring.cold_start(wiring.PROVIDER_SECRET)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    if event.get("bucket"):   # the first check of every payment due in a bucket (adapters/aws.py)
        logger.set_correlation_id(f"rec/{event['bucket']}")
        starter = wiring.reconciliation_starter()
        follow_up = starter.start if starter else None
        result = wiring.reconciliation().check_bucket(str(event["bucket"]), follow_up)
        if result["outcome"] == "pending" and result["wait_seconds"] <= BUCKET_SECONDS:
            # Woken a moment before this clock reached the bucket's end: the expiry tick has no
            # state to wait again, so wait the rest here (a reconciliation execution would loop).
            time.sleep(result["wait_seconds"])
            result = wiring.reconciliation().check_bucket(str(event["bucket"]), follow_up)
        logger.info("reconciliation bucket", extra=result)
        return result
    logger.set_correlation_id(str(event.get("booking_id", "")))
    crash_point("reconcile.before_check")
    result = {**wiring.reconciliation().check(event["booking_id"]), "bucket": ""}
    logger.info("reconciliation check", extra=result)
    return result
