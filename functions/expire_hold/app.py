"""Hold expiry task, called by the state machine: every unpaid hold of an expiry bucket once the
bucket's end has passed (``bucket``: the platform's tick; with ``event_id``: one offering's bucket,
for executions started before ticks were shared), or one hold (``booking_id``: executions started
before buckets existed)."""
from holdfast import wiring
from holdfast.observability import log_metrics, logger, tracer

wiring.cold_start(loads=("bookings",))  # every invocation expires through it


class BucketNotDue(Exception):
    """The bucket ends further ahead of this clock than the service waits out: the state machine
    retries (a clock to look at: on AWS the wait ends at the bucket's end)."""


def expire_bucket(bucket: str, event_id: str | None, indexed: bool = False) -> dict:
    result = wiring.bookings().expire_bucket(bucket, event_id, indexed=indexed)
    if result["outcome"] == "not_yet":
        raise BucketNotDue(f"{bucket} is {result['wait_seconds']:.1f} s ahead of this clock")
    return result


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    if "booking_id" not in event:
        event_id = str(event.get("event_id") or "") or None
        logger.set_correlation_id(f"{event_id or 'all'}/{event['bucket']}")
        # the tick's own input (``tick``): one started since the shard markers says so (``index``)
        indexed = wiring.tick_indexed(event.get("tick"))
        result = expire_bucket(str(event["bucket"]), event_id, indexed)
        logger.info("hold expiry bucket", extra=result)
        return result
    logger.set_correlation_id(str(event.get("booking_id", "")))
    result = wiring.bookings().expire(event["booking_id"])
    logger.info("hold expiry", extra=result)
    return result
