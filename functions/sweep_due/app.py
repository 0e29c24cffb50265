"""Scheduled sweeper: expire holds and restart reconciliation whose timer or execution is overdue;
send the settlement receipt of a prepaid service once it is rendered;
erase the personal data of bookings whose retention has run out;
hand a booking whose reconciliation keeps dying to an operator; give the money back on conflict
cases nobody decided by their deadline; resume an event cancellation whose job execution ended
without finishing."""
from holdfast import wiring
from holdfast.clock import system_clock
from holdfast.config import settings
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services.sweeper import sweep

wiring.cold_start(wiring.PROVIDER_SECRET, wiring.PSEUDONYM_SECRET, loads=("bookings",))  # every sweep expires through it


def give_up(booking, reason):
    payment_id = (booking.payment.payment_id if booking.payment else None) or ""
    wiring.payments().open_review(booking, reason, "sweeper", {"payment_id": payment_id})


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    starter = wiring.reconciliation_starter()
    result = sweep(wiring.store(), system_clock, wiring.bookings().expire,
                   (lambda booking_id, tag: starter.start(booking_id, tag)) if starter else (lambda *_: None),
                   give_up=give_up, grace_seconds=settings().sweep_grace_seconds,
                   max_restarts=settings().sweep_max_restarts,
                   lapse_resolution=lambda booking: wiring.resolutions().lapse(booking),
                   refund_timer=lambda booking: wiring.payments().refund_after_timer(booking),
                   line_timers=lambda booking, overdue: wiring.payments().line_timers(booking, overdue),
                   settle=lambda booking: wiring.settlements().settle(booking),
                   differences=wiring.payments().differences, part_refunds=wiring.payments().part_refunds.retry)
    if settings().event_cancellation_state_machine_arn:
        result["cancellations"] = wiring.event_cancellation().resume_all()
    # personal data past its retention: one page a sweep, the index resumes where this one stopped
    result["personal_data"] = wiring.personal_data().erase_ended()
    logger.info("sweep", extra=result)
    return result
