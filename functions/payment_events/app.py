"""Queued provider notifications: each is applied by the payment service, which fetches the object
it names from the provider (never believing the body) and acts on it."""
import json


from holdfast import wiring
from holdfast.faults import crash_point
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.sqs_batch import SqsMessage, process_batch

# every record is fetched from the provider and applied by the payment service: both loaded at init
wiring.cold_start(wiring.PROVIDER_SECRET, loads=("provider", "payments"))


@tracer.capture_method
def handle_record(record: SqsMessage) -> None:
    message = json.loads(record.body)
    # the payment is what ties this record's log lines to the webhook's and to the booking's
    logger.set_correlation_id(message.get("payment_id") or message["object_id"])
    outcome = wiring.payments().apply_notified(message["event"], message["object_id"])
    crash_point("consumer.after_applying")
    logger.info("notification applied", extra={"event": message["event"], "object_id": message["object_id"],
                                                "outcome": outcome})


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return process_batch(event, handle_record)
