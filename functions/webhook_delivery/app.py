"""Webhook deliveries: the webhooks' consumer of the notifications bus and of the queue of attempts.

* A message of the webhook events queue (the bus's second rule target, beside the notifier's) is
  an EventBridge event whose detail is one outbox event: it becomes one delivery for each of its
  organizer's endpoints that chose it (services/webhooks.py ``publish``).
* A message of the attempts queue is one attempt of one delivery (``attempt``): posted, signed,
  to the endpoint's checked address; a failure is queued again for its next moment.

A message that raised returns to its queue (partial batch) and ends in the queue's dead-letter
queue after five receives; a receiver's failure is not an error of this function (the delivery
records it and queues the next attempt), so the queue's own redrive only catches our faults.
"""
import json

from holdfast import wiring
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.sqs_batch import SqsMessage, process_batch

wiring.cold_start(wiring.WEBHOOK_KEY_SECRET)


@tracer.capture_method
def handle_record(record: SqsMessage) -> None:
    message = json.loads(record.body)
    if "delivery_id" in message:
        outcome = wiring.webhooks().attempt(message)
        logger.info("webhook attempt", extra={"delivery_id": message["delivery_id"], "outcome": outcome})
        return
    detail = message.get("detail") or {}
    made = wiring.webhooks().publish(detail)
    logger.info("webhook fact", extra={"type": detail.get("type"), "deliveries": made})


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return process_batch(event, handle_record)
