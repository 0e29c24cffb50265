"""The booking lifecycle's transitions explained (action, initiator, condition, data, key, repeat),
and the two payment lifecycles, which the code keeps no table for.

The notebook shows these as its transition table and its state diagrams, and asserts that the
booking rows name exactly the moves of `holdfast.domain.statuses.TRANSITIONS`.
"""
from __future__ import annotations

from devstack.design.lifecycle import START, Move

BOOKING_MOVES: list[Move] = []
BOOKING_MOVES.append(Move(START, "HELD", "hold_created", "customer", "quantity/seats valid; HOLD move: available ≥ n (or seat available)",
          "booking, places, hold_expires_at, journal #1, outbox, IDEM record", "Idempotency-Key header (IDEM#customer#key, 24 h)",
          "same key+body: the same booking, 201 Idempotent-Replayed; other body: 422"))
BOOKING_MOVES.append(Move("HELD", "PAYMENT_PENDING", "payment_requested", "customer", "HELD and before hold_expires_at",
          "payment attempt CREATING, idempotence key, requested_at, next check", "hf-pay-<booking> at the provider",
          "returns the one payment; an unknown attempt is re-sent with the same key (payment_retried)"))
for source in ("HELD", "PAYMENT_PENDING"):
    BOOKING_MOVES.append(Move(source, "CONFIRMED", "payment_succeeded", "provider / reconciler", "GET says succeeded, amount matches, booking holds places",
              "payment id and status, SELL move", "SQS dedup id = event+object+status; the booking version",
              "judge_payment → already_confirmed: nothing written"))
    BOOKING_MOVES.append(Move(source, "EXPIRED", "hold_expired", "timer (sweeper as backup)", "holds places, now ≥ hold_expires_at, places not secured",
              "RELEASE move", "execution name hold-<booking>", "noop_expired: nothing written"))
    BOOKING_MOVES.append(Move(source, "CANCELLED", "cancelled_by_customer", "customer", "holds places, no capture in flight",
              "RELEASE move", "the booking version", "returns the booking as it is"))
BOOKING_MOVES.append(Move("PAYMENT_PENDING", "CONFIRMED", "payment_captured (two-stage)", "provider / reconciler",
          "waiting_for_capture, places pinned first (places_secured_for_capture)", "capture key, SELL move",
          "hf-cap-<booking>", "the provider returns the same capture"))
BOOKING_MOVES.append(Move("PAYMENT_PENDING", "PAYMENT_FAILED", "payment_canceled / payment_rejected / reconciliation_limit_reached",
          "provider / customer / reconciler", "GET says canceled; or a 4xx on create; or the limit passed with nothing final",
          "RELEASE move (an authorisation is cancelled first)", "hf-void-<booking> for the cancel",
          "booking no longer holds places: ignored"))
BOOKING_MOVES.append(Move("PAYMENT_PENDING", "MANUAL_REVIEW", "manual_review_opened", "provider / reconciler",
          "amount mismatch, a second payment, provider unreachable at the limit", "review reason, next step, RELEASE move",
          "the booking version", "already in review: nothing written"))
BOOKING_MOVES.append(Move("CONFIRMED", "REFUND_PENDING", "cancelled_after_payment", "customer", "CONFIRMED",
          "UNSELL move, refund record with its key (before the call)", "rf-<payment>-cancel", "returns the booking as it is"))
for source in ("EXPIRED", "PAYMENT_FAILED"):
    BOOKING_MOVES.append(Move(source, "CONFIRMED", "late_payment_places_retaken", "provider / reconciler",
              "one-stage succeeded after release; RETAKE move: the same places still available", "RETAKE move, payment",
              "the booking version", "already_confirmed"))
    BOOKING_MOVES.append(Move(source, "PAYMENT_PENDING", "late_authorisation_places_retaken", "provider / reconciler",
              "two-stage waiting_for_capture after release; HOLD move succeeds", "HOLD move, places_secured",
              "hf-cap-<booking> next", "capture continues as above"))
    BOOKING_MOVES.append(Move(source, "REFUND_PENDING", "late_payment_refund_started", "provider / reconciler",
              "succeeded after the deadline, places gone", "refund record with its key (before the call)",
              "rf-<payment>-late", "the provider returns the one refund"))
    BOOKING_MOVES.append(Move(source, "MANUAL_REVIEW", "manual_review_opened (paid_in_time_places_resold)", "provider / reconciler",
              "captured_at < hold_expires_at, places gone", "review reason, next step", "the booking version",
              "already in review: nothing written"))
BOOKING_MOVES.append(Move("CANCELLED", "REFUND_PENDING", "payment_after_cancel_refund_started", "provider / reconciler",
          "one-stage succeeded after the customer cancelled (the open page was still paid)",
          "refund record with its key and requested_at (before the call)", "rf-<payment>-cancelled",
          "the provider returns the one refund"))
BOOKING_MOVES.append(Move("CANCELLED", "MANUAL_REVIEW", "manual_review_opened", "provider / reconciler",
          "amount mismatch or a second payment for a cancelled booking", "review reason, next step",
          "the booking version", "already in review: nothing written"))
BOOKING_MOVES.append(Move("REFUND_PENDING", "REFUNDED", "refund_succeeded", "provider / reconciler", "refund succeeded at the provider",
          "refund id and status", "rf-<payment>-<reason>", "the same refund comes back; nothing written"))
BOOKING_MOVES.append(Move("REFUND_PENDING", "MANUAL_REVIEW", "refund_canceled / manual_review_opened (refund_not_confirmed)",
          "provider / reconciler", "the provider refused the refund, or still unknown at the limit", "review reason",
          "the booking version", "already in review"))
BOOKING_MOVES.append(Move("MANUAL_REVIEW", "CONFIRMED", "review_confirmed", "operator",
          "GET at resolve time: money captured and not refunded (an authorisation is captured first); RETAKE move succeeds",
          "operator, note, RETAKE", "the booking version; hf-cap-op-<booking> for a capture", "409 not_in_review"))
BOOKING_MOVES.append(Move("MANUAL_REVIEW", "REFUND_PENDING", "review_refund_started", "operator",
          "GET at resolve time: succeeded, nothing refunded, no refund of ours in flight",
          "operator, note, refund key, requested_at", "rf-<payment>-review<version>", "409 not_in_review"))
BOOKING_MOVES.append(Move("MANUAL_REVIEW", "PAYMENT_FAILED", "review_closed", "operator",
          "GET at resolve time: nothing owed (no payment, pending or canceled; an authorisation is voided first)",
          "operator, note", "the booking version; hf-void-op-<booking> for a void", "409 not_in_review"))
BOOKING_MOVES.append(Move("MANUAL_REVIEW", "REFUNDED", "refund_succeeded / review_closed", "provider / reconciler / operator",
          "our refund (same payment, same refund id) succeeded for the whole amount; or GET shows it all refunded",
          "refund id and status", "rf-<payment>-<reason>", "nothing written"))

#: Journal entries that do not change the status: (status, actions, initiator, what it records).
SAME_STATUS: list[tuple[str, str, str, str]] = [
    ("PAYMENT_PENDING", "payment_created / payment_found_by_same_key / payment_found_by_metadata", "system / reconciler", "the provider's payment id"),
    ("PAYMENT_PENDING", "payment_outcome_unknown / payment_retried", "system / customer", "the call's answer was lost; same key next time"),
    ("PAYMENT_PENDING", "reconciliation_check / payment_not_found_at_provider", "reconciler", "the next check time, or NOT_CREATED"),
    ("PAYMENT_PENDING", "places_secured_for_capture", "provider / reconciler", "places pinned before a capture"),
    ("EXPIRED, PAYMENT_FAILED", "late_authorisation_cancelled", "provider / reconciler", "authorisation voided (hf-void-<booking>)"),
    ("CANCELLED", "authorisation_voided", "customer / provider / reconciler", "authorisation voided (hf-void-<booking>)"),
]

PROVIDER_PAYMENT: dict[str, set[str]] = {  # the provider's statuses; `succeeded` and `canceled` are final
    "pending": {"waiting_for_capture", "succeeded", "canceled"},
    "waiting_for_capture": {"succeeded", "canceled"},
    "succeeded": set(), "canceled": set(),
}
PROVIDER_PAYMENT_MOVES = [
    Move(START, "pending", "POST /v3/payments (hf-pay-<booking>)", "customer / reconciler"),
    Move("pending", "succeeded", "paid on the payment page (one-stage)", "customer"),
    Move("pending", "waiting_for_capture", "authorised on the payment page (two-stage)", "customer"),
    Move("pending", "canceled", "declined or abandoned until it expires", "customer / provider"),
    Move("waiting_for_capture", "succeeded", "capture once the places are pinned (hf-cap-<booking>)",
         "provider / reconciler / operator"),
    Move("waiting_for_capture", "canceled", "void: places gone or booking released (hf-void-<booking>)",
         "provider / reconciler / operator"),
]

OUR_ATTEMPT: dict[str, set[str]] = {  # Payment.state: stored before the provider call, then what we learned
    "CREATING": {"CREATED", "UNKNOWN", "REJECTED"},
    "UNKNOWN": {"CREATED", "NOT_CREATED", "CREATING"},
    "CREATED": set(), "REJECTED": set(), "NOT_CREATED": set(),
}
OUR_ATTEMPT_MOVES = [
    Move(START, "CREATING", "attempt stored before the call", "customer"),
    Move("CREATING", "CREATED", "2xx: the payment id", "customer / reconciler"),
    Move("CREATING", "UNKNOWN", "timeout, 5xx or lost answer", "customer / reconciler"),
    Move("CREATING", "REJECTED", "4xx: the provider refused it", "customer / reconciler"),
    Move("UNKNOWN", "CREATED", "found by the same key or by metadata", "reconciler"),
    Move("UNKNOWN", "CREATING", "repeated with the same key", "customer / reconciler"),
    Move("UNKNOWN", "NOT_CREATED", "not at the provider after its key window", "reconciler"),
]
