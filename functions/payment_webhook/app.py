"""Provider notifications: check the sender's network, queue the hint, answer 200 at once.

The body is only a hint; the consumer fetches the payment from the provider before acting.
"""
import ipaddress
import json

from holdfast import wiring
from holdfast.config import settings
from holdfast.entry.http import MAX_BODY_BYTES, error_response, json_response, make_resolver, source_ip, too_deep
from holdfast.observability import WEBHOOKS_REFUSED, count, log_metrics, logger, tracer
from holdfast.entry.provider_notification import parse_notification

wiring.cold_start()

app = make_resolver()


def _allowed(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in settings().allowed_webhook_networks)


@app.post("/webhooks/payments")
@tracer.capture_method
def receive_notification():
    sender = source_ip(app)
    if not _allowed(sender):
        logger.warning("notification from a network that is not allowed", extra={"source_ip": sender})
        count(WEBHOOKS_REFUSED)
        return error_response(403, "sender_not_allowed", "Notifications are accepted only from the provider's networks.")
    raw = app.current_event.body or ""
    if len(raw.encode()) > MAX_BODY_BYTES:
        return error_response(413, "body_too_large", "The notification is too large.")
    try:
        if too_deep(raw):
            raise ValueError("nested too deep")
        notification = parse_notification(json.loads(raw))
    except (ValueError, RecursionError):
        return error_response(400, "malformed_notification", "Not a provider notification.")
    payment_id = notification.about_payment
    dedup = wiring.payment_events_queue().enqueue(event=notification.event, object_id=notification.object_id,
                                                  status=notification.status, payment_id=payment_id)
    logger.info("notification queued", extra={"event": notification.event, "object_id": notification.object_id,
                                              "payment_id": payment_id, "dedup": dedup[:12]})
    return json_response(200, {"queued": True})


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
