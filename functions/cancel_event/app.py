"""Task of the event cancellation state machine: one step of the job (list a page of the event's
bookings, settle one booking, or finish), chosen by ``step``."""
from holdfast import wiring
from holdfast.observability import log_metrics, logger, tracer

wiring.cold_start(wiring.PROVIDER_SECRET, loads=("cancellation_job",))  # every step uses it


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    step = event["step"]
    job = wiring.cancellation_job()
    event_id = str(event["event_id"])
    if step == "list":
        return {"event_id": event_id, "reason": event["reason"], "pass": int(event["pass"]),
                **job.list_page(event_id, str(event.get("after") or ""))}
    if step == "settle":
        outcome = job.settle(event_id, str(event["booking_id"]), str(event["reason"]))
        logger.info("booking settled for a cancelled event", extra={"booking_id": event["booking_id"],
                                                                     "outcome": outcome})
        return {"booking_id": event["booking_id"], "outcome": outcome}
    if step == "finish":
        result = job.finish(event_id, int(event["pass"]))
        logger.info("event cancellation pass", extra={"event_id": event_id, **result})
        return {"event_id": event_id, "reason": event["reason"], "after": "", **result}
    raise ValueError(f"unknown step {step!r}")
