"""The sweeper: bookings whose timer or reconciliation is overdue (the execution never started,
or died) are acted on here, each on its own.

- An overdue hold is expired directly.
- An unsettled payment whose check is overdue gets a new reconciliation execution. Every restart
  is recorded on the booking first (a conditional write, so two sweeps cannot both restart it) and
  names its execution after the check count and the restart number: Step Functions never lets a
  name be used twice, even after that execution has ended, so each restart needs a fresh one.
  The booking's next look moves back by a growing pause, so a booking that keeps failing does not
  sit at the head of the due index that the sweeper reads from.
- A conflict case nobody decided by its ``respond_by`` (services/resolutions.py) is handed to
  ``lapse_resolution``, which gives the money back. Cases sit in the review list, not the due
  index, and are few: each pass reads that list.
- A confirmed booking whose kind set a timer (``Booking.timer``: parking's NO_SHOW at the window's
  start plus the lot's grace) is moved into the timer's declared state by the ``timer`` actor
  (services/transitions.py: advance), its places following that state. The sweeper is this
  timer's only clock: it acts within one sweep interval plus ``grace_seconds`` of the moment.
- A confirmed order's line whose kind set it a timer (an order's parking line: its no-show) is
  handed to ``line_timers`` (services/refunds.py), which does for the line what the timer or the
  lot's refund policy does for a single reservation, the order standing for its other lines.
- A part refund (a cheaper exchange's difference, an order line's refunded no-show) whose answer
  never came is asked for again once its ``next_check_at`` is past (``Booking.part_refunds_due``),
  by ``part_refunds`` (services/part_refunds.py ``retry``, under the same key): here for a booking
  in the due index, and for one in a case, which sits in the review index instead.
- A confirmed booking whose payment carried a fiscal receipt is due for its settlement receipt once
  its service is rendered (``Booking.settlement_due``); ``settle`` (services/settlements.py)
  sends it, moves the look later, or makes the failure an operator's case.
- A booking in the review index (in review, or standing with an open review) is not in the due
  index: what it is owed besides its case (a part refund's lost answer, above; a dearer
  exchange's held places past their time or its payment's check) is found by reading that list.
- After MAX_RESTARTS restarts without a check completing in between, the sweeper gives up visibly:
  the booking goes to manual review with the reason ``reconciliation_stuck`` (or carries that
  open review when it cannot change status), which takes it out of the due index.

One booking that raises is logged and counted as ``failed``; the others are still handled.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable

from ..clock import iso, parse_iso
from ..domain.booking import Booking, HoldVerdict, judge_hold
from ..observability import logger
from ..ports import Clock, PaymentStore, StaleBooking
from . import transitions

if TYPE_CHECKING:
    from .exchange_differences import DifferencePayments

#: Restarts of a booking's reconciliation, with no check completing in between, before giving up
#: (the default; the template's SweepMaxRestarts sets it).
MAX_RESTARTS = 5
STUCK_REASON = "reconciliation_stuck"


def sweep(store: PaymentStore, clock: Clock, expire: Callable[[str], dict[str, Any]],
          start_reconciliation: Callable[[str, str], Any], *, give_up: Callable[[Booking, str], Any],
          grace_seconds: int = 60, limit: int = 100, max_restarts: int = MAX_RESTARTS,
          lapse_resolution: Callable[[Booking], str] | None = None,
          refund_timer: Callable[[Booking], bool] | None = None,
          settle: Callable[[Booking], str] | None = None,
          differences: "DifferencePayments | None" = None,
          part_refunds: Callable[[Booking, str], str] | None = None,
          line_timers: Callable[[Booking, str], str] | None = None) -> dict[str, int]:
    """One pass over the ``limit`` most overdue bookings. Returns how many were expired, restarted
    (reconciling), given up, left alone (skipped) and failed, and with ``lapse_resolution`` how many
    conflict cases lapsed."""
    overdue = iso(clock() - timedelta(seconds=grace_seconds))
    counts = {"expired": 0, "reconciling": 0, "skipped": 0, "failed": 0, "gave_up": 0}
    for booking_id in store.due_bookings(overdue, limit):
        try:
            outcome = _sweep_one(store, clock, booking_id, overdue, expire, start_reconciliation, give_up,
                                 grace_seconds, max_restarts, refund_timer, settle, differences, part_refunds,
                                 line_timers)
        except Exception:  # noqa: BLE001 - isolated: the rest of the sweep goes on, the next one retries
            logger.exception("sweep could not handle a booking", extra={"booking_id": booking_id})
            outcome = "failed"
        counts[outcome] = counts.get(outcome, 0) + 1   # "timers" appears once a kind's timer fired
    # a booking in a case is in the review index, not the due index: what the sweeper owes it
    # besides the case's lapse (a lost part refund's answer, a dearer exchange's held places past
    # their time or its payment's check) is found there
    owed: list[tuple[Callable[[Booking, str], bool], Callable[[Booking, str], str]]] = []
    if part_refunds is not None:
        owed.append((_refund_overdue, part_refunds))
    if differences is not None:
        owed.append((differences.due, differences.sweep))
    reviews = store.list_reviews() if lapse_resolution is not None or owed else []
    if owed:
        _owed_in_review(store, reviews, overdue, owed, counts)
    if lapse_resolution is not None:
        counts["lapsed"] = _lapse_cases(reviews, clock, lapse_resolution, counts)
    return counts


def _refund_overdue(booking: Booking, overdue: str) -> bool:
    due = booking.part_refunds_due
    return due is not None and due < overdue


def _owed_in_review(store: PaymentStore, reviews: list[Booking], overdue: str,
                    owed: list[tuple[Callable[[Booking, str], bool], Callable[[Booking, str], str]]],
                    counts: dict[str, int]) -> None:
    """Each (due, act) of ``owed`` for every booking in the review index it is due for; after one
    acted, the booking is read again for the next."""
    for booking in reviews:
        current: Booking | None = booking
        for due, act in owed:
            if current is None or not due(current, overdue):
                continue
            try:
                counts_as = act(current, overdue)
            except Exception:  # noqa: BLE001 - isolated like the due bookings; the next sweep retries
                logger.exception("sweep could not do what a booking in review is owed",
                                 extra={"booking_id": booking.booking_id})
                counts_as = "failed"
            counts[counts_as] = counts.get(counts_as, 0) + 1
            current = store.get_booking(booking.booking_id)


def _lapse_cases(reviews: list[Booking], clock: Clock, lapse: Callable[[Booking], str], counts: dict[str, int]) -> int:
    now, lapsed = iso(clock()), 0
    for booking in reviews:
        if not booking.resolution_open or booking.resolution["respond_by"] > now:
            continue
        try:
            lapsed += lapse(booking) == "lapsed"
        except Exception:  # noqa: BLE001 - isolated like the due bookings; the next sweep retries
            logger.exception("sweep could not lapse a conflict case", extra={"booking_id": booking.booking_id})
            counts["failed"] += 1
    return lapsed


def _sweep_one(store: PaymentStore, clock: Clock, booking_id: str, overdue: str, expire, start_reconciliation,  # noqa: ANN001
               give_up, grace_seconds: int, max_restarts: int, refund_timer=None, settle=None,  # noqa: ANN001
               differences=None, part_refunds=None, line_timers=None) -> str:  # noqa: ANN001
    booking = store.get_booking(booking_id)
    if booking is None:
        return "skipped"
    if part_refunds is not None and _refund_overdue(booking, overdue):
        # a part refund whose answer was lost and never asked again (services/part_refunds.py)
        outcome = part_refunds(booking, overdue)
        booking = store.get_booking(booking_id)
        if booking is None or booking.due_at is None or booking.due_at >= overdue:
            return outcome
    if differences is not None and differences.due(booking, overdue):
        # a dearer exchange's held places past their time, or its payment's check (exchange_differences.py)
        outcome = differences.sweep(booking, overdue)
        booking = store.get_booking(booking_id)
        if booking is None or booking.due_at is None or booking.due_at >= overdue:
            return outcome
    if judge_hold(booking, parse_iso(overdue)) is HoldVerdict.EXPIRE:
        if expire(booking_id).get("outcome") == "expired":
            return "expired"
    if booking.timer is not None and booking.timer[0] < overdue:
        try:
            # the offering's policy may give the money back instead (a refunded no-show)
            if refund_timer is None or not refund_timer(booking):
                transitions.advance(store, booking, clock(), booking.timer[1], actor="timer", action="timer_fired",
                                    decision=f"not entered by {booking.timer[0]}")
        except StaleBooking:
            return "skipped"   # checked in (or cancelled) meanwhile: nothing is due any more
        return "timers"
    if line_timers is not None and booking.line_timers and booking.line_timers[0][0] < overdue:
        try:
            # an order's own lines, each as its offering's policy says (a refunded no-show)
            return line_timers(booking, overdue)
        except StaleBooking:
            return "skipped"   # checked in at the gate (or cancelled) meanwhile: the next sweep decides again
    if settle is not None and booking.settlement_due is not None and booking.settlement_due < overdue:
        return f"settlement_{settle(booking)}"
    payment = booking.payment
    if payment is None or booking.settled or (payment.next_check_at or "") >= overdue:
        return "skipped"
    restart = payment.restarts + 1
    if restart > max_restarts:
        logger.warning("reconciliation gave up after restarts", extra={"booking_id": booking_id,
                                                                       "restarts": payment.restarts})
        give_up(booking, STUCK_REASON)
        return "gave_up"
    # Recorded before starting: the conditional write makes this sweep the only one to use the
    # name, and the pushed-back due time lets the restarted execution run before anyone looks again.
    now = clock()
    pause = grace_seconds * 2 ** (restart - 1)
    try:
        transitions.apply(
            store, booking, now, actor="sweeper", action="reconciliation_restarted",
            decision=f"no check since {payment.next_check_at}; reconciliation restarted "
                     f"({restart} of {max_restarts})",
            payment=replace(payment, restarts=restart, next_check_at=iso(now + timedelta(seconds=pause))),
        )
    except StaleBooking:
        return "skipped"   # it changed meanwhile (a check ran, a notification came): look next time
    start_reconciliation(booking_id, f"sweep-{payment.checks}-{restart}")
    return "reconciling"
