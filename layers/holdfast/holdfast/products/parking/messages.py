"""What parking's messages say beyond the core's (services/messages.py): the space and the plate
of any parking booking, the entry pass shown as a QR code in its confirmation, and its own types
with their templates (``templates/mail/<language>/``): a car entering, a car leaving with the
receipt of its stay, and a reservation ended because nobody arrived (the kind's NO_SHOW timer).
"""
from __future__ import annotations

from typing import Any

from holdfast.services import message_words as words
from holdfast.services.messages import Facts, MessageParts

LABELS = {
    "en": {"entered": "Entered", "exited": "Left", "stay": "Time parked", "tariff": "Tariff", "charge": "Charge",
           "prepaid": "Paid in advance", "paid_at_exit": "Paid at the exit", "due": "Left owing", "space": "Space",
           "plate": "Plate", "pass": "Show this code at the gate",
           "pass_text": "Your entry pass is the QR code in this message (shown by mail programs that display HTML).",
           "pass_note": "Show the QR code below at the gate when you arrive: it is your entry pass for the "
                        "reserved time.",
           "hourly": "{hourly} per hour", "cap": "at most {cap} per day", "grace": "first {grace} min free"},
    "ru": {"entered": "Въезд", "exited": "Выезд", "stay": "Время стоянки", "tariff": "Тариф", "charge": "Начислено",
           "prepaid": "Оплачено заранее", "paid_at_exit": "Оплачено на выезде", "due": "Не оплачено",
           "space": "Место", "plate": "Номер", "pass": "Покажите этот код на въезде",
           "pass_text": "Пропуск для въезда — QR-код в этом письме (виден в почтовых программах, показывающих HTML).",
           "pass_note": "Покажите QR-код ниже на въезде: это ваш пропуск на забронированное время.",
           "hourly": "{hourly} в час", "cap": "не больше {cap} в сутки", "grace": "первые {grace} мин бесплатно"},
}


def booking(facts: Facts, values: dict[str, Any]) -> None:
    """Any message about a parking booking: its place is a space, its car has a plate; a
    confirmation carries the entry pass the booking's view signs (none once it is no longer
    confirmed: the view then carries no token)."""
    places = facts.view.get("places") or {}
    values["space"] = places.get("space_id") or ""
    values["plate"] = facts.view.get("plate") or ""
    if values["space"]:
        values["places"] = f"{facts.labels['space'].lower()} {values['space']}"
    token = facts.view.get("entry_token")
    if token and facts.template == "booking.confirmed":
        from holdfast.ports import Attachment
        from holdfast.services.message_files import qr_png

        values["inline"].append(Attachment("pass.png", "image/png", qr_png(str(token))))
        values["qr"] = "cid:pass.png"


def _unknown_car(values: dict[str, Any]) -> None:
    """A message whose booking is gone (or a drive-up ticket's) still names no space or plate."""
    values.setdefault("space", "")
    values.setdefault("plate", "")


def vehicle_entered(facts: Facts, values: dict[str, Any]) -> None:
    _unknown_car(values)
    places = facts.view.get("places") or {}
    values["leave_by"] = facts.at(places.get("to"))


def vehicle_exited(facts: Facts, values: dict[str, Any]) -> None:
    """The receipt of the stay, as the gate's exit wrote it in the outbox event."""
    _unknown_car(values)
    receipt = facts.detail.get("receipt") or {}
    labels, money = facts.labels, facts.money
    tariff = [labels["hourly"].format(hourly=money(receipt.get("hourly")))] if receipt.get("hourly") else []
    if receipt.get("daily_cap"):
        tariff.append(labels["cap"].format(cap=money(receipt["daily_cap"])))
    if receipt.get("grace_minutes"):
        tariff.append(labels["grace"].format(grace=receipt["grace_minutes"]))
    rows = (("space", receipt.get("space_id") or values["space"]), ("entered", facts.at(receipt.get("entered_at"))),
            ("exited", facts.at(receipt.get("exited_at") or facts.detail.get("at"))),
            ("stay", words.duration(int(receipt["minutes"]), facts.language) if "minutes" in receipt else ""),
            ("tariff", ", ".join(tariff)), ("charge", money(receipt.get("charge"))),
            ("prepaid", money(receipt.get("prepaid"))), ("paid_at_exit", money(receipt.get("paid"))),
            ("due", money(receipt.get("due"))))
    values["receipt"] = [(labels[key], value) for key, value in rows if value]
    # the booking's amount is what was paid in advance: the receipt says it as such
    values["facts"] = [(label, value) for label, value in values["facts"] if label != labels["amount"]]
    values["charge"] = money(receipt.get("charge"))
    values["due"] = money(receipt.get("due"))


def no_show(facts: Facts, values: dict[str, Any]) -> None:
    """Nobody arrived by the kind's timer: the reservation ended and its calendar entry goes."""
    timer = (facts.booking.kind_details or {}).get("timer_at") if facts.booking else None
    values["deadline"] = facts.at(timer)
    facts.calendar(values, "CANCEL", facts.sequence() + 1)


MESSAGES = MessageParts(
    package=__package__, labels=LABELS, booking=booking,
    types={"vehicle.entered": vehicle_entered, "vehicle.exited": vehicle_exited, "booking.no_show": no_show},
)
