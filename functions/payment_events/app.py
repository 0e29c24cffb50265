"""Queued provider notifications: fetch each object from the provider, then apply it."""
import json


from holdfast import wiring
from holdfast.ports import ProviderNotFound
from holdfast.adapters import yookassa_sdk as _sdk  # noqa: F401 - every record is fetched from the provider: loaded at init
from holdfast.faults import crash_point
from holdfast.services import payments as _payments  # noqa: F401 - and applied by it
from holdfast.observability import log_metrics, logger, tracer
from holdfast.sqs_batch import SqsMessage, process_batch

wiring.cold_start(wiring.PROVIDER_SECRET)


@tracer.capture_method
def handle_record(record: SqsMessage) -> None:
    message = json.loads(record.body)
    # the payment is what ties this record's log lines to the webhook's and to the booking's
    logger.set_correlation_id(message.get("payment_id") or message["object_id"])
    provider, payments = wiring.provider(), wiring.payments()
    try:
        if message["event"].startswith("refund."):
            outcome = payments.apply_provider_refund(provider.get_refund(message["object_id"]))
        else:
            outcome = payments.apply_provider_payment(provider.get_payment(message["object_id"]))
    except ProviderNotFound:
        # A forged or foreign notification: nothing by that id exists at the provider.
        outcome = "not_found_at_provider"
    crash_point("consumer.after_applying")
    logger.info("notification applied", extra={"event": message["event"], "object_id": message["object_id"],
                                                "outcome": outcome})


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return process_batch(event, handle_record)
