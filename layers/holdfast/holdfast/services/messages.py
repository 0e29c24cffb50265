"""What a customer reads about a booking: every notification type rendered from templates
(``holdfast/templates/mail/<language>/<template>.txt``) into a ``Message``: subject, plain text,
HTML, and the files it carries (a calendar entry, the parking pass's QR image).

A template holds the subject and the prose; the facts (what, when, where, the amount), the
receipts and the links are laid out by ``base.txt`` and ``base.html``, the same for every type.
The prose is rendered twice: as text (no escaping) and as HTML (Jinja2 autoescaping: an event's
name or a venue the organizer typed is text there, never markup).

The words say what the engine really does: the held message's "after" is ``hold_next_step``'s
(a late payment confirms the booking if the places are still free, otherwise a conflict case or
the money back); a conflict case's choices are services/resolutions.py's ``alternative`` and
``refund``, and past ``respond_by`` the sweeper gives the money back.

Jinja2, icalendar and segno are imported on the first render, never at a function's init.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable
from urllib.parse import urlencode

from ..domain.booking import Booking
from ..domain.languages import known
from ..domain.review_steps import REVIEW_REASONS
from ..ports import Attachment, Message
from . import message_words as words

#: The templates, by name. A notification type renders with the template of its own name, but for
#: the variants below (``template_name``); a type without one gets ``booking.changed``.
TEMPLATES = ("booking.held", "booking.hold_expiring", "booking.confirmed", "booking.expired", "booking.cancelled",
             "booking.payment_failed", "booking.refund_pending", "booking.refunded", "booking.manual_review",
             "booking.conflict_case", "booking.no_show", "waitlist.offer", "event.changed", "event.cancelled",
             "vehicle.entered", "vehicle.exited", "booking.changed")
#: The conflict case's reason (services/conflict_cases.py CASE_REASON; not imported: that module
#: pulls the payment service into the notifier).
CASE_REASON = "places_taken_alternatives_offered"
#: Money going back because the organizer cancelled the offering: said as such.
_EVENT_CANCELLED_TYPES = ("booking.cancelled", "booking.refund_pending", "booking.refunded")
#: Types whose message withdraws the booking's calendar entry (its places are no longer the customer's).
_CALENDAR_CANCELS = ("event.cancelled", "booking.refund_pending", "booking.no_show")

LABELS = {
    "en": {"what": "What", "when": "When", "where": "Where", "places": "Places", "amount": "Amount",
           "booking": "Booking", "paid": "Paid", "payment": "Payment", "paid_at": "Date", "receipt": "Receipt",
           "entered": "Entered", "exited": "Left", "stay": "Time parked", "tariff": "Tariff", "charge": "Charge",
           "prepaid": "Paid in advance", "paid_at_exit": "Paid at the exit", "due": "Left owing", "space": "Space",
           "plate": "Plate", "open": "Open your booking", "pay": "Pay now", "refund_choice": "Give my money back",
           "pass": "Show this code at the gate",
           "pass_text": "Your entry pass is the QR code in this message (shown by mail programs that display HTML).",
           "before": "Before", "after": "Now", "footer":
           "Holdfast bookings. You receive this because a booking was made with this address.",
           "seats": ("seat", "seats"), "count": ("place", "places"), "unnamed": "booking {}", "hourly": "{hourly} per hour",
           "cap": "at most {cap} per day", "grace": "first {grace} min free"},
    "ru": {"what": "Что", "when": "Когда", "where": "Где", "places": "Места", "amount": "Сумма",
           "booking": "Бронь", "paid": "Оплачено", "payment": "Платёж", "paid_at": "Дата", "receipt": "Чек",
           "entered": "Въезд", "exited": "Выезд", "stay": "Время стоянки", "tariff": "Тариф", "charge": "Начислено",
           "prepaid": "Оплачено заранее", "paid_at_exit": "Оплачено на выезде", "due": "Не оплачено",
           "space": "Место", "plate": "Номер", "open": "Открыть бронь", "pay": "Оплатить",
           "refund_choice": "Вернуть мои деньги", "pass": "Покажите этот код на въезде",
           "pass_text": "Пропуск для въезда — QR-код в этом письме (виден в почтовых программах, показывающих HTML).",
           "before": "Было",
           "after": "Стало", "footer": "Бронирование Holdfast. Это письмо пришло, потому что с этим адресом "
                                       "была оформлена бронь.",
           "seats": ("место", "места", "мест"), "count": ("место", "места", "мест"), "unnamed": "бронь {}",
           "hourly": "{hourly} в час", "cap": "не больше {cap} в сутки", "grace": "первые {grace} мин бесплатно"},
}
#: How a change's field is named (domain/event_changes.py ANNOUNCED).
FIELDS = {"en": {"starts_at": "Start", "venue": "Venue"}, "ru": {"starts_at": "Начало", "venue": "Место проведения"}}


@dataclass(frozen=True)
class Site:
    """Where a message's links go and who its calendar entries come from (wiring builds it)."""

    #: The customer's booking page; ``{booking_id}`` is replaced (PAYMENT_RETURN_URL's form).
    booking_url: str = ""
    #: The sender's address: the calendar entries' organizer.
    sender: str = ""
    #: What the booking's kind adds to its view (a parking pass's entry token), as the API shows it.
    view_extras: Callable[[Booking], dict[str, Any]] | None = None


def template_name(kind: str, booking: Booking | None) -> str:
    if booking is not None and booking.event_cancelled and kind in _EVENT_CANCELLED_TYPES:
        return "event.cancelled"
    if kind == "booking.manual_review" and booking is not None and (booking.resolution or {}).get("reason") == CASE_REASON:
        return "booking.conflict_case"
    return kind if kind in TEMPLATES else "booking.changed"


def compose(store: Any, detail: dict[str, Any], site: Site | None = None) -> Message:
    """The message for one notification: the booking and its offering as they are now, read
    from the store (``get_booking``, ``get_event``), and the change as the outbox event says."""
    booking = store.get_booking(str(detail["booking_id"])) if detail.get("booking_id") else None
    event_id = booking.event_id if booking is not None else detail.get("event_id")
    offering = store.get_event(str(event_id)) if event_id else None
    return render(str(detail.get("type", "")), detail, booking, offering, site or Site())


def render(kind: str, detail: dict[str, Any], booking: Booking | None, offering: dict[str, Any] | None,
           site: Site) -> Message:
    name = template_name(kind, booking)
    language = known(booking.language if booking is not None else detail.get("language"))
    values = _Facts(kind, name, detail, booking, offering or {}, site, language).values()
    text_env, html_env = _environments()
    subject = " ".join(_block(text_env, language, name, "subject", values).split())
    text_body = _block(text_env, language, name, "body", values).strip()
    html_body = _block(html_env, language, name, "body", values).strip()
    shared = {**values, "subject": subject}
    text = text_env.get_template("base.txt").render(shared, body=text_body).strip() + "\n"
    paragraphs = [_markup()(" ".join(part.split())) for part in html_body.split("\n\n") if part.strip()]
    html = html_env.get_template("base.html").render(shared, paragraphs=paragraphs)
    return Message(subject, text, html, tuple(values["attachments"]), tuple(values["inline"]))


@functools.cache
def _environments():  # noqa: ANN202 - two jinja2 Environments, imported on first use
    import jinja2

    path = str(resources.files("holdfast").joinpath("templates", "mail"))
    common = {"loader": jinja2.FileSystemLoader(path), "undefined": jinja2.StrictUndefined,
              "trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": False}
    return jinja2.Environment(autoescape=False, **common), jinja2.Environment(autoescape=True, **common)


def _markup():  # noqa: ANN202
    from markupsafe import Markup

    return Markup


def _block(env: Any, language: str, name: str, block: str, values: dict[str, Any]) -> str:
    template = env.get_template(f"{language}/{name}.txt")
    return "".join(template.blocks[block](template.new_context(values)))


class _Facts:
    """The values one template renders with: the common facts, then the type's own."""

    def __init__(self, kind: str, name: str, detail: dict[str, Any], booking: Booking | None,
                 offering: dict[str, Any], site: Site, language: str) -> None:
        self.kind, self.name, self.detail, self.booking = kind, name, detail, booking
        self.offering, self.site, self.language = offering, site, language
        self.labels = LABELS[language]
        self.view = self._view()
        self.zone = self._zone()

    # ------------------------------------------------------------------------------ common
    def values(self) -> dict[str, Any]:
        booking, detail, labels = self.booking, self.detail, self.labels
        places = self.view.get("places") or {}
        values: dict[str, Any] = {
            "lang": self.language, "labels": labels, "kind": self.kind, "template": self.name,
            "booking_id": detail.get("booking_id", ""), "status": str(detail.get("status") or
                                                                      (booking.status if booking else "")),
            # a booking whose offering is gone is named by its id, never left blank
            "name": self.offering.get("name") or detail.get("name") or labels["unnamed"].format(detail.get("booking_id", "")),
            "venue": self.offering.get("venue") or "", "city": self.offering.get("city") or "",
            "when": self._when(places), "places": self._places(places),
            "amount": words.money(booking.amount.as_dict(), self.language) if booking else "",
            "hold_until": self.at(detail.get("hold_expires_at") or (booking.hold_expires_at if booking else None)),
            "at": self.at(detail.get("at")), "booking_url": self.url(), "pay_url": self.url(),
            "two_stage": bool(booking and booking.payment_mode.value == "two_stage"),
            "space": places.get("space_id") or "", "plate": self.view.get("plate") or "",
            "facts": [], "receipt": [], "actions": [], "choices": [], "changes": [],
            "attachments": [], "inline": [], "qr": "",
        }
        values["facts"] = [(labels[key], value) for key, value in (
            ("what", values["name"]), ("when", values["when"]),
            ("where", ", ".join(part for part in (values["venue"], values["city"]) if part)),
            ("places", values["places"]), ("amount", values["amount"]), ("booking", values["booking_id"]))
            if value]
        if values["booking_url"]:
            values["actions"] = [(labels["open"], values["booking_url"])]
        own = getattr(self, "_" + self.name.replace(".", "_"), None)
        if own is not None:
            own(values)
        return values

    def at(self, moment: str | None) -> str:
        return words.date_time(moment, self.zone, self.language)

    def money(self, amount: dict[str, Any] | None) -> str:
        return words.money(amount, self.language)

    def url(self, **query: str) -> str:
        if not self.site.booking_url or not self.detail.get("booking_id"):
            return ""
        base = self.site.booking_url.replace("{booking_id}", str(self.detail["booking_id"]))
        return base + (("&" if "?" in base else "?") + urlencode(query) if query else "")

    def _view(self) -> dict[str, Any]:
        if self.booking is None:
            return {}
        from .booking_views import describe

        view = describe(self.booking)
        if self.site.view_extras is not None:
            view |= self.site.view_extras(self.booking)
        return view

    def _zone(self) -> str:
        """The offering's zone: its resource's (an appointment), its own settings' (a lot), else UTC."""
        places = self.view.get("places") or {}
        resource = (self.offering.get("resources") or {}).get(places.get("resource_id") or "") or {}
        settings = self.offering.get("settings") or {}
        return str(resource.get("timezone") or settings.get("timezone") or self.offering.get("timezone") or "UTC")

    def _when(self, places: dict[str, Any]) -> str:
        start = places.get("starts_at") or places.get("from")
        if start:
            return words.time_range(start, places.get("ends_at") or places.get("to"), self.zone, self.language)
        return self.at(self.offering.get("starts_at"))

    def _places(self, places: dict[str, Any]) -> str:
        if places.get("seats"):
            seats = [str(seat).split("#")[-1] for seat in places["seats"]]
            word = words.count(len(seats), self.language, self.labels["seats"]).split(" ", 1)[1]
            return f"{word} {', '.join(seats)}"
        if places.get("space_id"):
            return f"{self.labels['space'].lower()} {places['space_id']}"
        quantity = places.get("quantity")
        return words.count(int(quantity), self.language, self.labels["count"]) if quantity else ""

    def _start_end(self) -> tuple[str | None, str | None]:
        places = self.view.get("places") or {}
        start = places.get("starts_at") or places.get("from") or self.offering.get("starts_at")
        return start, places.get("ends_at") or places.get("to") or self.offering.get("ends_at")

    def _calendar(self, values: dict[str, Any], method: str, sequence: int) -> None:
        start, end = self._start_end()
        if not start or self.booking is None:
            return
        from .message_files import calendar

        where = ", ".join(part for part in (values["venue"], values["city"]) if part)
        data = calendar(uid=f"booking-{self.booking.booking_id}@holdfast", method=method, sequence=sequence,
                        summary=values["name"], start=start, end=end, location=where, url=values["booking_url"],
                        stamp=str(self.detail.get("at") or self.booking.updated_at), organizer=self.site.sender,
                        attendee=self.booking.contact_email)
        values["attachments"].append(Attachment("booking.ics", f"text/calendar; method={method}; charset=UTF-8", data))

    def _sequence(self) -> int:
        return int(self.offering.get("catalog_version") or 0)

    # ------------------------------------------------------------------------------ per type
    def _booking_confirmed(self, values: dict[str, Any]) -> None:
        booking = self.booking
        if booking is None:
            return
        payment = booking.payment
        values["receipt"] = [(self.labels[key], value) for key, value in (
            ("paid", values["amount"]), ("payment", payment.payment_id if payment else ""),
            ("paid_at", self.at(payment.paid_at) if payment and payment.paid_at else values["at"])) if value]
        token = self.view.get("entry_token")
        if token:
            from .message_files import qr_png

            values["inline"].append(Attachment("pass.png", "image/png", qr_png(str(token))))
            values["qr"] = "cid:pass.png"
        self._calendar(values, "PUBLISH", self._sequence())

    def _booking_held(self, values: dict[str, Any]) -> None:
        values["actions"] = [(self.labels["pay"], values["pay_url"])] if values["pay_url"] else []

    _booking_hold_expiring = _booking_held
    _waitlist_offer = _booking_held

    def _booking_refund_pending(self, values: dict[str, Any]) -> None:
        values["refund"] = self._refund_amount()
        values["no_show"] = "no_show" in str(self.detail.get("reason") or "")
        self._calendar(values, "CANCEL", self._sequence() + 1)

    def _booking_refunded(self, values: dict[str, Any]) -> None:
        values["refund"] = self._refund_amount()

    def _booking_cancelled(self, values: dict[str, Any]) -> None:
        values["kept"] = values["status"] == "CANCELLED_NO_REFUND"
        if values["kept"]:
            self._calendar(values, "CANCEL", self._sequence() + 1)

    def _event_cancelled(self, values: dict[str, Any]) -> None:
        values["refund"] = self._refund_amount() if self.kind != "booking.cancelled" else ""
        values["refunded"] = self.kind == "booking.refunded"
        if self.kind == "booking.refund_pending":
            self._calendar(values, "CANCEL", self._sequence() + 1)

    def _booking_no_show(self, values: dict[str, Any]) -> None:
        timer = (self.booking.kind_details or {}).get("timer_at") if self.booking else None
        values["deadline"] = self.at(timer)
        self._calendar(values, "CANCEL", self._sequence() + 1)

    def _booking_manual_review(self, values: dict[str, Any]) -> None:
        reason = str(((self.booking.review if self.booking else None) or {}).get("reason") or "default")
        reason = reason.split("_rejected_")[0]
        values["reason"] = reason if reason in REVIEW_REASONS else "default"

    def _booking_conflict_case(self, values: dict[str, Any]) -> None:
        case = (self.booking.resolution if self.booking else None) or {}
        values["respond_by"] = self.at(case.get("respond_by"))
        values["choices"] = [(self._option(option), self.url(choice="alternative", **self._fields(option)))
                             for option in case.get("alternatives") or []]
        values["refund_url"] = self.url(choice="refund")
        values["actions"] = [(text, url) for text, url in values["choices"] if url]
        if values["refund_url"]:
            values["actions"].append((self.labels["refund_choice"], values["refund_url"]))

    def _option(self, option: dict[str, Any]) -> str:
        if option.get("starts_at"):
            return words.time_range(option["starts_at"], option.get("ends_at"), self.zone, self.language)
        return ", ".join(f"{key} {value}" for key, value in self._fields(option).items())

    @staticmethod
    def _fields(option: dict[str, Any]) -> dict[str, str]:
        """What names an alternative when chosen: every field but its count of free places, as the
        booking page sends them (web/booking.js ``alternativeFields``)."""
        return {str(key): str(value) for key, value in option.items() if key != "available"}

    def _event_changed(self, values: dict[str, Any]) -> None:
        changes = self.detail.get("changes") or {}
        values["changes"] = [(FIELDS[self.language].get(field, field), self._changed(field, change.get("before")),
                              self._changed(field, change.get("after"))) for field, change in changes.items()]
        confirmed = values["status"] == "CONFIRMED"
        values["refund_until"] = self.at(self.detail.get("change_refund_until")) if confirmed else ""
        if confirmed and changes:   # the calendar entry sent with the confirmation, updated
            self._calendar(values, "PUBLISH", int(self.detail.get("version") or self._sequence()))

    def _changed(self, field: str, value: Any) -> str:
        return self.at(value) if field == "starts_at" and value else str(value or "")

    def _vehicle_exited(self, values: dict[str, Any]) -> None:
        receipt = self.detail.get("receipt") or {}
        labels = self.labels
        tariff = [labels["hourly"].format(hourly=self.money(receipt.get("hourly")))] if receipt.get("hourly") else []
        if receipt.get("daily_cap"):
            tariff.append(labels["cap"].format(cap=self.money(receipt["daily_cap"])))
        if receipt.get("grace_minutes"):
            tariff.append(labels["grace"].format(grace=receipt["grace_minutes"]))
        rows = (("space", receipt.get("space_id") or values["space"]), ("entered", self.at(receipt.get("entered_at"))),
                ("exited", self.at(receipt.get("exited_at") or self.detail.get("at"))),
                ("stay", words.duration(int(receipt["minutes"]), self.language) if "minutes" in receipt else ""),
                ("tariff", ", ".join(tariff)), ("charge", self.money(receipt.get("charge"))),
                ("prepaid", self.money(receipt.get("prepaid"))), ("paid_at_exit", self.money(receipt.get("paid"))),
                ("due", self.money(receipt.get("due"))))
        values["receipt"] = [(labels[key], value) for key, value in rows if value]
        # the booking's amount is what was paid in advance: the receipt says it as such
        values["facts"] = [(label, value) for label, value in values["facts"] if label != labels["amount"]]
        values["charge"] = self.money(receipt.get("charge"))
        values["due"] = self.money(receipt.get("due"))

    def _vehicle_entered(self, values: dict[str, Any]) -> None:
        places = self.view.get("places") or {}
        values["leave_by"] = self.at(places.get("to"))

    def _refund_amount(self) -> str:
        booking = self.booking
        if booking is None:
            return ""
        refund = (booking.payment.refund if booking.payment else None) or {}
        amount = refund.get("amount") if isinstance(refund.get("amount"), dict) else None
        return self.money(amount or booking.amount.as_dict())
