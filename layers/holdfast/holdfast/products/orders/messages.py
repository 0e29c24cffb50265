"""What an order's messages say beyond the core's (services/messages.py): one message for the
whole order. Its calendar file has an entry per line (an event at its start as the event says it
now, a parking window from its start to its end), and its confirmation carries every ticket and
the parking pass as QR codes, each captioned with what it lets in."""
from __future__ import annotations

from typing import Any

from holdfast.services.messages import Facts, MessageParts

from .lines import lines_of

LABELS = {
    "en": {"ticket_caption": "Ticket: {name}{seat}", "seat": ", seat {seat}",
           "parking_caption": "Parking pass: {name}, {plate}",
           "pass": "Show each code at its door or gate",
           "pass_text": "Your tickets and your parking pass are the QR codes in this message (shown by mail "
                        "programs that display HTML): each ticket at the door, the parking pass at the gate.",
           "pass_note": "Show each ticket's QR code at the door and the parking pass at the gate when you arrive."},
    "ru": {"ticket_caption": "Билет: {name}{seat}", "seat": ", место {seat}",
           "parking_caption": "Пропуск на парковку: {name}, {plate}",
           "pass": "Покажите каждый код у своего входа или въезда",
           "pass_text": "Билеты и пропуск на парковку — QR-коды в этом письме (видны в почтовых программах, "
                        "показывающих HTML): билет — на входе, пропуск — на въезде.",
           "pass_note": "Покажите QR-код каждого билета на входе, а пропуск на парковку — на въезде."},
}


def booking(facts: Facts, values: dict[str, Any]) -> None:
    """Any message about an order: its calendar entries, one per line; its confirmation's passes."""
    order = facts.booking
    if order is None:
        return
    lines = lines_of(order)
    entries = []
    from holdfast.services.message_files import CalendarEntry

    for line in lines:
        details = line.details or {}
        if details.get("from") and details.get("to"):   # a window of its own (a parking line)
            start, end = str(details["from"]), str(details["to"])
            offering = _offering(facts, line.offering_id)
        else:   # an event's or a slot's: its start as its offering says it now
            offering = _offering(facts, line.offering_id)
            start, end = offering.get("starts_at"), offering.get("ends_at")
        if not start:
            continue
        where = ", ".join(part for part in (offering.get("venue"), offering.get("city")) if part)
        entries.append(CalendarEntry(uid=f"booking-{order.booking_id}-{line.line_id}@holdfast",
                                     summary=line.name or values["name"], start=start, end=end, location=where))
    values["calendar_entries"] = entries
    if facts.template == "booking.confirmed":
        _passes(facts, values, {line.line_id: line.name for line in lines})


def _offering(facts: Facts, offering_id: str) -> dict[str, Any]:
    if offering_id == facts.offering.get("event_id"):
        return facts.offering
    read = facts.site.offering_of
    return (read(offering_id) if read is not None else None) or {}


def _passes(facts: Facts, values: dict[str, Any], names: dict[str, str]) -> None:
    """Every ticket and the parking pass the order's view carries now, as inline QR images."""
    from holdfast.ports import Attachment
    from holdfast.services.message_files import qr_png

    labels = facts.labels
    for n, ticket in enumerate(facts.view.get("tickets") or (), start=1):
        name = f"ticket-{n}.png"
        values["inline"].append(Attachment(name, "image/png", qr_png(str(ticket["token"]))))
        seat = labels["seat"].format(seat=ticket["seat_id"]) if ticket.get("seat_id") else ""
        values["passes"].append((f"cid:{name}", labels["ticket_caption"].format(
            name=names.get(str(ticket.get("line_id")), ""), seat=seat)))
    token = facts.view.get("entry_token")
    if token:
        line = next((line for line in lines_of(facts.booking) if line.line_id == facts.view.get("pass_line")), None)
        plate = ((line.details or {}).get("plate") if line is not None else None) or ""
        values["inline"].append(Attachment("pass.png", "image/png", qr_png(str(token))))
        values["passes"].append(("cid:pass.png", labels["parking_caption"].format(
            name=names.get(str(facts.view.get("pass_line")), ""), plate=plate)))


MESSAGES = MessageParts(package="holdfast.products.orders", labels=LABELS, booking=booking)
