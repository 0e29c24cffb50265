"""A parking ticket's exit payments: asked at the exit gate, recorded from the provider's
notifications, every one of them counted.

Each payment is its own item (``TICKET#<t> EXITPAY#<n>``, products/parking/adapters/store.py), written
with its idempotence key (``hf-exit-<ticket>-<n>``) before the provider is called, in state
``asked``; then ``created`` (the provider's id and confirmation URL), and ``paid`` or ``canceled``
once the provider says so. More can come due while one is pending (the stay goes on): a new
payment is asked for the new amount and the older one stays tracked, so a customer who pays it
after all has it counted (paid exit payments add up) and never loses it.

Who records the outcome: the payment-events consumer on the provider's notification
(``record_provider_payment``, through PaymentService.apply_provider_payment: the payment carries
``ticket_id``, ``lot_id`` and ``exit_payment``, its number, in its metadata), or the next exit,
which asks the provider only about payments still ``created``.

The driver pays on a page of ours (``exit.html``, the exit page next to the booking page), not
on the provider's directly: the exit answers that page's link as its ``confirmation_url``, naming
the ticket and the payment's ``page_key`` (random, stored with the payment: whoever holds the link
sees that payment, its ticket's plate and times, and nobody else). The page (``page``) shows what
is owed and sends the driver on to the provider, whose ``return_url`` is the same link, and once
paid shows the receipt.

With receipts on for the lot's organizer (its fiscal settings, domain/fiscal.py), an exit payment
carries a receipt: one item, the stay, ``full_payment`` (rendered as it is paid: no settlement
follows). The receipt is decided with the record, before the provider is called; its address is
the driver's, which the gate does not know: the payment is created only once the exit page has
sent it (``pay``, 400 ``contact_required`` without it), and the address stays on the record so a
repeat under the same key sends the same receipt.

Money beyond what a ticket owed is never dropped: the exit that closes a ticket paid more than
its charge, or a payment that succeeds after the ticket closed, opens a ``payment`` gate case
(products/parking/services/gate_cases.py) for an operator, in the same transaction that counts it.
"""
from __future__ import annotations

import hmac
import secrets
from decimal import Decimal
from typing import Any, Callable
from urllib.parse import urlencode

from holdfast.clock import iso
from holdfast.domain import fiscal
from holdfast.domain.errors import Conflict, NotFound, PaymentProviderUnavailable
from holdfast.domain.money import Money
from holdfast.observability import logger
from holdfast.ports import Change, Clock, FiscalReads, PaymentProvider, ProviderError, StaleBooking
from holdfast.services.receipts import ContactRequired
from holdfast.services.transitions import decide_again
from .gate_cases import case_id, new_case
from ..rules import lot_id_of
from ..ports import ExitPaymentStore

ATTEMPTS = 4
PENDING = ("asked", "created")


def provider_state(record: dict[str, Any], found: dict[str, Any]) -> str | None:
    """``paid``, ``canceled`` or None (not final, or not the amount this payment asked for)."""
    if found.get("status") == "canceled":
        return "canceled"
    if found.get("status") == "succeeded":
        if Money.parse(record["amount"], record["currency"]).matches(found.get("amount") or {}):
            return "paid"
        logger.warning("exit payment succeeded for another amount", extra={"payment_id": found.get("id")})
    return None


def paid_total(records: list[dict[str, Any]]) -> Decimal:
    return sum((Decimal(r["amount"]) for r in records if r["state"] == "paid"), Decimal("0.00"))


class ExitPayments:
    def __init__(self, store: ExitPaymentStore, clock: Clock, provider: Callable[[], PaymentProvider], return_url: str,
                 page_url: str | None = None, fiscal_reads: FiscalReads | None = None) -> None:
        self.store = store
        #: organizers' fiscal settings (None: exit payments carry no receipt)
        self.fiscal_reads = fiscal_reads
        self.clock = clock
        self.provider = provider
        self.return_url = return_url
        #: The exit payment page; None: the gate is given the provider's page itself, as before.
        self.page_url = page_url

    def page_link(self, ticket: dict[str, Any], record: dict[str, Any]) -> str | None:
        if not self.page_url or not record.get("page_key"):
            return None   # a payment asked before the page existed keeps its provider link
        query = urlencode({"lot": ticket["lot_id"], "ticket": ticket["ticket_id"], "key": record["page_key"]})
        return f"{self.page_url}?{query}"

    def settled(self, ticket: dict[str, Any]) -> list[dict[str, Any]]:
        """Every exit payment of the ticket; the provider is asked only about those still ``created``
        (a notification has usually recorded the outcome first)."""
        return [self._look_up(ticket, r) if r["state"] == "created" else r
                for r in self.store.exit_payments(ticket["ticket_id"])]

    def _look_up(self, ticket: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        try:
            found = self.provider().get_payment(record["payment_id"])
        except ProviderError:
            raise PaymentProviderUnavailable("The payment provider cannot be reached; try the exit again.",
                                             retry_after=5) from None
        state = provider_state(record, found)
        if state is None:
            return record
        change = self.store.exit_payment_change(ticket["ticket_id"], int(record["number"]), {"state": state}, "created")
        self.store.commit(Change(items=(change,)))   # StaleBooking: recorded meanwhile, read again
        return {**record, "state": state}

    def ask(self, ticket: dict[str, Any], due: Money, records: list[dict[str, Any]], until: str,
            lot: dict[str, Any] | None = None) -> str | None:
        """Where the driver pays ``due`` for the ticket's stay up to ``until`` (the exit page, or the
        provider's page): the latest payment if it is still pending for that amount, else a new one
        (the earlier ones stay tracked). A payment whose receipt still needs the driver's address
        is created by the exit page (``pay``): the gate is given the page's link."""
        ticket_id = ticket["ticket_id"]
        latest = records[-1] if records else None
        if latest and latest["state"] in PENDING and latest["amount"] == due.text:
            if latest.get("confirmation_url"):
                return self.page_link(ticket, latest) or latest["confirmation_url"]
            record = latest   # the answer was lost: asked again under the same key, no second payment
        else:
            number = int(latest["number"]) + 1 if latest else 1
            record = {"number": number, "idempotence_key": f"hf-exit-{ticket_id}-{number}", "amount": due.text,
                      "currency": due.currency, "state": "asked", "asked_at": iso(self.clock()),
                      "charged_until": until, "page_key": secrets.token_urlsafe(18)}
            receipt = self._sale_record(lot, due)
            if receipt is not None and self.page_url:
                record["receipt"] = receipt
            self.store.commit(Change(items=(self.store.exit_payment_put(ticket_id, record),)))
        if record.get("receipt") and not record.get("contact_email"):
            return self.page_link(ticket, record)   # the page asks for the address, then pays
        return self._create(ticket, record, due)

    def _sale_record(self, lot: dict[str, Any] | None, due: Money) -> dict[str, Any] | None:
        organizer_id = (lot or {}).get("organizer_id")
        settings = self.fiscal_reads.get_fiscal(str(organizer_id)) if self.fiscal_reads and organizer_id else None
        if settings is None:
            return None
        line = fiscal.line_for(f"Parking, {(lot or {}).get('name') or 'stay'}", due, 1,
                               settings.vat_for(lot_id_of(lot or {})), fiscal.PAID_AND_RENDERED)
        return fiscal.sale_record([line], settings)

    def _create(self, ticket: dict[str, Any], record: dict[str, Any], due: Money) -> str | None:
        ticket_id = ticket["ticket_id"]
        receipt = fiscal.receipt(record["contact_email"], record["receipt"], due) if record.get("receipt") else None
        try:
            created = self.provider().create_payment(
                amount=due.as_dict(), description=f"Parking exit, ticket {ticket_id}",
                metadata={"ticket_id": ticket_id, "lot_id": ticket["lot_id"], "exit_payment": str(record["number"])},
                capture=True, return_url=self.page_link(ticket, record)
                or self.return_url.replace("{booking_id}", ticket.get("booking_id") or ""),
                idempotence_key=record["idempotence_key"], **({"receipt": receipt} if receipt else {}))
        except ProviderError:
            # the key is stored: the next exit asks again under it (a lost answer made no second payment)
            raise PaymentProviderUnavailable("The payment provider cannot be reached; try the exit again.",
                                             retry_after=5) from None
        url = (created.get("confirmation") or {}).get("confirmation_url")
        try:
            self.store.commit(Change(items=(self.store.exit_payment_change(
                ticket_id, int(record["number"]), {"payment_id": created["id"], "confirmation_url": url,
                                                   "state": "created"}, "asked"),)))
        except StaleBooking:
            pass   # a notification that recorded it first has said more: nothing to add
        return (self.page_link(ticket, record) if url else None) or url

    def pay(self, lot: dict[str, Any], ticket_id: str, key: str, contact_email: str | None) -> dict[str, Any]:
        """The exit page's Pay: the payment of the link's record, created now if it waited for the
        receipt's address (``contact_email``, kept on the record; 400 ``contact_required`` without
        one). A repeat answers the same payment; a payment already made or superseded by a later
        one (the stay went on) is answered as the page shows it, never paid again."""
        ticket, records, record = self._linked(lot, ticket_id, key)
        if record["state"] == "asked" and int(records[-1]["number"]) == int(record["number"]):
            if record.get("receipt") and not record.get("contact_email"):
                if not contact_email:
                    raise ContactRequired()
                try:
                    self.store.commit(Change(items=(self.store.exit_payment_change(
                        ticket_id, int(record["number"]), {"contact_email": contact_email}, "asked"),)))
                except StaleBooking:
                    raise Conflict("The exit payment changed meanwhile; open the link again.",
                                   code="exit_payment_changed") from None
                record = {**record, "contact_email": contact_email}
            self._create(ticket, record, Money.parse(record["amount"], record["currency"]))
        return self.page(lot, ticket_id, key)

    def _linked(self, lot: dict[str, Any], ticket_id: str, key: str
                ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        missing = NotFound("No such exit payment.", code="exit_payment_not_found")
        ticket = self.store.get_ticket(ticket_id)
        if ticket is None or ticket["lot_id"] != lot_id_of(lot):
            raise missing
        records = self.store.exit_payments(ticket_id)
        record = next((r for r in records if r.get("page_key") and hmac.compare_digest(
            str(r["page_key"]).encode(), key.encode())), None)
        if record is None:
            raise missing
        return ticket, records, record

    def page(self, lot: dict[str, Any], ticket_id: str, key: str) -> dict[str, Any]:
        """What the exit page shows the holder of a payment's link: the lot, the plate, the stay it
        covers, the amount and where it stands; while pending, the provider's page to pay on (the
        provider is asked about a payment still ``created``, so a driver back from paying sees it
        paid before the notification arrives). An unknown ticket or a wrong key is the same 404."""
        ticket, records, record = self._linked(lot, ticket_id, key)
        if record["state"] == "created":
            try:
                record = self._look_up(ticket, record)
            except PaymentProviderUnavailable:
                pass   # shown as pending; the page asks again
            except StaleBooking:   # recorded meanwhile by the notification: read it as it is now
                record = next(r for r in self.store.exit_payments(ticket_id) if r["number"] == record["number"])
        state = "pending" if record["state"] in PENDING else record["state"]
        return {"lot": {"lot_id": lot_id_of(lot), "name": lot.get("name")}, "ticket_id": ticket_id,
                "plate": ticket.get("plate"), "space_id": ticket["space_id"], "entered_at": ticket["entered_at"],
                "charged_until": record.get("charged_until"), "exited_at": ticket.get("exited_at"),
                "amount": {"value": record["amount"], "currency": record["currency"]}, "state": state,
                # a later payment asked for more (the stay went on): the gate shows that one's link
                "superseded": int(records[-1]["number"]) != int(record["number"]),
                "confirmation_url": record.get("confirmation_url") if state == "pending" else None,
                # its receipt waits for the driver's address: the page asks for it, then pays (``pay``)
                "contact_required": state == "pending" and bool(record.get("receipt"))
                and not record.get("contact_email"),
                "receipt": bool(record.get("receipt"))}


def record_provider_payment(store: ExitPaymentStore, clock: Clock, paid: dict[str, Any]) -> str:
    """Record an exit payment as fetched from the provider on its ticket (the payment-events path).
    Returns what was done, for the log line and the tests."""
    meta = paid.get("metadata") or {}
    ticket_id, payment_id = meta.get("ticket_id"), paid.get("id", "")
    def record(ticket: dict[str, Any] | None) -> str:
        if ticket is None or ticket["lot_id"] != meta.get("lot_id"):
            logger.warning("exit payment for an unknown ticket", extra={"payment_id": payment_id})
            return "unknown_ticket"
        records = store.exit_payments(ticket_id)
        record = next((r for r in records if r.get("payment_id") == payment_id), None) or next(
            (r for r in records if str(r["number"]) == str(meta.get("exit_payment")) and not r.get("payment_id")), None)
        if record is None:
            logger.warning("exit payment not recorded on its ticket", extra={"payment_id": payment_id})
            return "unknown_exit_payment"
        state = provider_state(record, paid)
        if state is None or record["state"] not in PENDING:
            return "exit_payment_unchanged"
        number = int(record["number"])
        items = [store.exit_payment_change(ticket_id, number, {"state": state, "payment_id": payment_id},
                                           record["state"])]
        outcome = "exit_payment_" + state
        if state == "paid" and ticket["status"] != "OPEN":
            # the car has left and its exit counted without this money: an operator gives it back
            # or sets it against what the ticket left unpaid
            items += store.gate_case_items(new_case(
                case_id(ticket["lot_id"], "payment", payment_id), "payment", ticket["lot_id"], "paid_after_exit",
                iso(clock()), "provider", ticket_id=ticket_id, plate=ticket.get("plate"), payment_id=payment_id,
                amount={"value": record["amount"], "currency": record["currency"]},
                unpaid={"value": ticket["unpaid"], "currency": record["currency"]} if ticket.get("unpaid") else None),
                ticket.get("booking_id"))
            outcome = "exit_payment_after_exit_review"
        items.append(store.ticket_status_is(ticket_id, ticket["status"]))
        store.commit(Change(items=tuple(items)))
        logger.info("exit payment recorded", extra={"payment_id": payment_id, "ticket_id": ticket_id,
                                                    "outcome": outcome})
        return outcome

    # the payment or the ticket moved meanwhile (StaleBooking): read both again
    return decide_again(lambda: store.get_ticket(ticket_id) if ticket_id else None, record,
                        attempts=ATTEMPTS, exhausted=StaleBooking(ticket_id or ""))
