"""Scheduled sweeper: expire holds and restart reconciliation whose timer or execution is overdue."""
from holdfast import wiring
from holdfast.clock import system_clock
from holdfast.config import settings
from holdfast.observability import logger, tracer
from holdfast.services.reconciliation import sweep


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event, context):
    starter = wiring.reconciliation_starter()
    result = sweep(wiring.store(), system_clock, wiring.bookings().expire,
                   (lambda booking_id, tag: starter.start(booking_id, tag)) if starter else (lambda *_: None),
                   grace_seconds=settings().sweep_grace_seconds)
    logger.info("sweep", extra=result)
    return result
