"""What a customer and an operator read of a booking: its view, and a conflict case as its
customer sees it. Pure functions of the stored booking (no store, no clock)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import kinds
from ..domain import fiscal
from ..domain.booking import Booking, settled_lines
from ..domain.codes import without_uses
from ..domain.exchange import restored
from ..domain.money import Money
from ..domain.refund_policy import refund_by_policy
from ..domain.review_steps import hold_next_step, hold_text_keys, next_step
from ..domain.texts import DEFAULT_LANGUAGE, text
from ..domain.statuses import HOLDING


def describe(booking: Booking, language: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """The booking as its customer reads it, its sentences in ``language`` (domain/texts.py)."""
    payment = None
    if booking.payment is not None:
        payment = {
            "payment_id": booking.payment.payment_id,
            "status": booking.payment.provider_status or ("unknown" if booking.payment.state != "CREATED" else None),
            "confirmation_url": booking.payment.confirmation_url,
        }
        if booking.payment.refund:
            payment["refund"] = {key: booking.payment.refund.get(key) for key in ("refund_id", "status", "reason")}
            # what it gives back: the share a policy or a kept part left, else the whole price
            payment["refund"]["amount"] = booking.payment.refund.get("amount") or booking.amount.as_dict()
        if booking.payment.exchange_refunds:   # the differences exchanges gave back, an order line's own refund
            payment["exchange_refunds"] = [{key: entry.get(key) for key in ("refund_id", "status", "amount", "requested_at")}
                                           | ({"line_id": entry["line_id"]} if entry.get("line_id") else {})
                                           | ({"payment_id": entry["payment_id"]} if entry.get("payment_id") else {})
                                           for entry in booking.payment.exchange_refunds]
    view: dict[str, Any] = {
        "booking_id": booking.booking_id, "event_id": booking.event_id, "status": booking.status.value,
        "places": kinds.of_booking(booking).describe_places(without_uses(booking.places)), "amount": booking.amount.as_dict(),
        "payment_mode": booking.payment_mode.value, "hold_expires_at": booking.hold_expires_at,
        "created_at": booking.created_at, "updated_at": booking.updated_at, "payment": payment,
    }
    if booking.differences:
        view["payments"] = payments_view(booking)
        held = booking.held_difference
        if held is not None:
            view["exchange_difference"] = difference_view(held)
    code = (booking.kind_details or {}).get("code")
    if code:   # what the code took off (issue 45)
        view["code"] = {"code": code, "full_amount": {"value": booking.kind_details["full_amount"],
                                                      "currency": booking.amount.currency}}
    if booking.status in HOLDING and not booking.places_secured:
        alternatives = kinds.of_booking(booking).offers_alternatives
        view["hold_next_step"] = hold_next_step(booking.hold_expires_at, language, alternatives)
        # the keys of GET /texts a page fills in its reader's clock, so it says the same
        view["texts"] = hold_text_keys(alternatives)
    if booking.review:
        view["review"] = dict(booking.review)
        if booking.review.get("reason"):   # stored as told then; told now in the reader's language
            view["review"]["next_step"] = next_step(booking.review["reason"], language)
    if booking.resolution:
        view["resolution"] = resolution_view(booking)
    if booking.contact_email:
        view["contact_email"] = booking.contact_email
    if booking.payment is not None and booking.payment.receipt:
        view["receipts"] = receipts_view(booking)
    return view


def difference_view(entry: dict[str, Any]) -> dict[str, Any]:
    """A dearer exchange's difference as its customer reads it: what to pay, where, by when."""
    payment = entry.get("payment") or {}
    return {"amount": dict(entry["amount"]), "price": dict(entry["price"]), "state": entry["state"],
            "to_event_id": entry["to_event_id"], "expires_at": entry["expires_at"],
            "places": kinds.of_places(places := restored(entry["places"])).describe_places(places),
            "payment_id": payment.get("payment_id"), "confirmation_url": payment.get("confirmation_url"),
            "payment_status": payment.get("provider_status") or ("unknown" if payment.get("state") != "CREATED"
                                                                 else None)}


def payments_view(booking: Booking) -> list[dict[str, Any]]:
    """Every provider payment of the booking, in order: the one it was bought with (``purpose``
    ``booking``) and each dearer exchange's difference (``exchange_difference``, with the
    exchange's ``state``: held, paid, lapsed, failed, refunding, refunded)."""
    out: list[dict[str, Any]] = []
    if booking.payment is not None:
        out.append({"purpose": "booking", "payment_id": booking.payment.payment_id,
                    "status": booking.payment.provider_status, "amount": booking.charged.as_dict()})
    for entry in booking.differences or ():
        payment = entry.get("payment") or {}
        out.append({"purpose": "exchange_difference", "payment_id": payment.get("payment_id"),
                    "status": payment.get("provider_status"), "amount": dict(entry["amount"]),
                    "exchange_state": entry["state"], "confirmation_url": payment.get("confirmation_url")
                    if entry["state"] == "held" else None, **({"refund_id": entry["refund_id"]}
                                                             if entry.get("refund_id") else {})})
    return out


def receipts_view(booking: Booking) -> list[dict[str, Any]]:
    """The fiscal receipts of the booking's money (54-FZ), as the engine knows them: ``type``
    (payment, settlement, refund), ``status``, ``amount``, ``at``, and where they were e-mailed.
    ``status`` is the engine's record: ``issued`` once the money they follow moved (the provider
    registers a payment's and a refund's receipt with it), ``due``, ``requested``, ``sent`` or
    ``failed`` for the settlement receipt."""
    payment = booking.payment
    assert payment is not None and payment.receipt
    amount = booking.amount.as_dict()
    out: list[dict[str, Any]] = []
    if payment.provider_status == "succeeded":   # what was paid, before any exchange's difference went back
        out.append({"type": "payment", "status": "issued", "amount": booking.charged.as_dict(), "at": payment.paid_at})
    lines = settled_lines(booking)
    # an order's lines settle one by one (issue 44): one settlement receipt each, for its own items
    owed = [(line.settlement(payment), booking.line_settlement_due(line),
             fiscal.line_amount(payment.receipt, line.offering_id, booking.amount.currency).as_dict(),
             {"line_id": line.line_id}) for line in lines] \
        or [(payment.settlement or {}, booking.first_settlement_due, booking.first_payment_share.as_dict(), {})]
    # a dearer exchange's difference payment closes its own prepayment with a receipt of its own
    owed += [(part.settlement(booking), booking.difference_settlement_due(part), part.share.as_dict(),
              {"payment_id": part.payment_id}) for part in booking.settled_differences]
    for settlement, due, owed_amount, whose in owed:
        # (a payment keeps its settlement's first look from when it was asked for: owed only once sold)
        if settlement.get("state") or due is not None:
            out.append({"type": "settlement", "status": settlement.get("state", "due"), "amount": owed_amount,
                        **whose, "at": settlement.get("sent_at") or settlement.get("rendered_at") or due,
                        **({"receipt_id": settlement["receipt_id"]} if settlement.get("receipt_id") else {}),
                        # the provider's word on it, read back (pending, succeeded, canceled)
                        **({"provider_status": settlement["status"]} if settlement.get("status") else {})})
    for difference in payment.exchange_refunds or []:
        if difference.get("status") == "succeeded":
            out.append({"type": "refund", "status": "issued", "amount": difference["amount"],
                        "at": difference.get("requested_at")})
    refund = payment.refund or {}
    if refund.get("status") == "succeeded":
        out.append({"type": "refund", "status": "issued", "amount": refund.get("amount") or amount,
                    "at": refund.get("requested_at")})
    for entry in booking.differences or ():
        # a dearer exchange's difference payment carries its own receipt (exchange_differences.py),
        # and its refund one of what it gave back
        made = entry.get("payment") or {}
        if made.get("provider_status") == "succeeded":
            out.append({"type": "payment", "status": "issued", "amount": dict(entry["amount"]), "at": made.get("paid_at")})
        if entry.get("state") == "refunded" and entry.get("refund_status") == "succeeded":
            out.append({"type": "refund", "status": "issued",
                        "amount": dict(entry.get("refund_amount") or entry["amount"]), "at": entry.get("created_at")})
    for receipt in out:
        receipt["sent_to"] = booking.contact_email
    return out


def cancel_terms(booking: Booking, event: Any, now: datetime, language: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """What cancelling this confirmed booking now does, decided by the hook the cancellation itself
    uses (``Kind.cancel_without_refund``; ``Kind.admitted``: once someone came in, the customer
    cannot cancel at all), so the dialog never promises a refund the engine keeps: ``cancellable``,
    ``cancel_refund`` (whether the money goes back), ``cancel_refund_until`` (the last moment it
    does, where the kind has one) and the sentence (``cancel_next_step``; its GET /texts key in
    ``texts.cancel``)."""
    kind = kinds.of_booking(booking)
    if kind.admitted(booking):   # someone came in on it: only its organizer may cancel it now
        return {"cancellable": False, "cancel_refund": False,
                "cancel_next_step": text("cancel.checked_in", language), "texts": {"cancel": "cancel.checked_in"}}
    kept = kind.cancel_without_refund(event, booking, now) if event else None
    until = None if kept else kind.refund_until(event, booking) if event else None
    key = "cancel.no_refund" if kept else "cancel.refund_until" if until else "cancel.refund"
    terms: dict[str, Any] = {"cancellable": True, "cancel_refund": kept is None, "cancel_next_step": text(key, language, until=until),
                             "texts": {"cancel": key}}
    if until:
        terms["cancel_refund_until"] = until
    # what cancelling now gives back, as an amount: nothing when kept, the policy's share, or all
    if booking.comp or kept:
        back = Money.stored("0", booking.amount.currency)
    else:
        back = refund_by_policy(event, booking.amount, now, kind.starts_at(event, booking)) or booking.amount
        if back.value == 0:   # the policy keeps everything now: the cancel is refused (no_refund_now)
            terms["cancellable"] = False
    terms["cancel_refund_amount"] = back.as_dict()
    # the sentence says what the amount says: "in full" only when all that was paid goes back
    # (not a policy's share, nor what is left after an exchange gave a difference back)
    if booking.comp and not kept:
        key = "cancel.nothing_paid"
    elif not kept and not until and 0 < back.value < booking.charged.value:
        key = "cancel.refund_part"
    if key != terms["texts"]["cancel"]:
        terms["cancel_next_step"] = text(key, language, amount=back.text)
        terms["texts"] = {"cancel": key}
    return terms


def resolution_view(booking: Booking) -> dict[str, Any]:
    """The conflict case as its customer sees it: what was offered, until when, who is responsible,
    and, once decided, what was chosen (never the request key it was chosen with, an operator's
    note, nor which organizer and key decided: operators see those in the journal)."""
    case = dict(booking.resolution or {})
    decision = case.pop("decision", None)
    view = {"open": booking.resolution_open, **case}
    if decision:
        view["decision"] = {key: value for key, value in decision.items() if key not in ("key", "note", "who")}
    return view
