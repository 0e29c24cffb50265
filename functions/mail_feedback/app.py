"""Mail feedback: SES's bounce and complaint events for the configuration set, through its SNS
topic. A permanent bounce or a complaint puts each recipient on the suppression list that the
notifier honours (services/mail_policy.py); anything else SES reports is ignored here. A message
that is not an SES event is logged and dropped (SNS would only redeliver it); a storage error
raises, so Lambda's asynchronous retries deliver the event again (suppressing twice is a no-op)."""
import json

from holdfast import wiring
from holdfast.clock import iso, system_clock
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services.mail_policy import record_feedback

wiring.cold_start()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    suppressed = 0
    for record in event.get("Records") or []:
        try:
            message = json.loads((record.get("Sns") or {}).get("Message") or "")
        except ValueError:
            message = None
        if not isinstance(message, dict):
            logger.warning("not an SES event; dropped", extra={"message_id": (record.get("Sns") or {}).get("MessageId")})
            continue
        # counts and the event's type only: the recipients' addresses never reach the logs
        newly = record_feedback(wiring.mail_policy(), message, iso(system_clock()))
        logger.info("mail feedback", extra={"event_type": message.get("eventType") or message.get("notificationType"),
                                            "suppressed": newly})
        suppressed += newly
    return {"suppressed": suppressed}
