"""What a customer reads about a booking: every notification type rendered from templates
(``holdfast/templates/mail/<language>/<template>.txt``) into a ``Message``: subject, plain text,
HTML, and the files it carries (a calendar entry, a pass's QR image).

The core writes the messages every product shares; a product says the rest through its
``Product.messages`` (``MessageParts``): the message types it owns, with their templates in its own
package (a parking exit's receipt), its words, and what its bookings add to any message (a
parking space and its entry pass). The renderer asks the message type's owner and the booking's
product (by its kind), so no product is spelled here.

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
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Mapping
from urllib.parse import urlencode

from ..domain import pricing
from ..domain.booking import Booking
from ..domain.languages import known
from ..domain.review_steps import REVIEW_REASONS, next_step
from ..ports import Attachment, Message
from . import message_words as words

#: The core's templates, by name. A notification type renders with the template of its own name (a
#: product's own type with the product's, ``MessageParts.types``), but for the variants below
#: (``template_name``); a type without one gets ``booking.changed``.
TEMPLATES = ("booking.held", "booking.hold_expiring", "booking.confirmed", "booking.expired", "booking.cancelled",
             "booking.payment_failed", "booking.refund_pending", "booking.refunded", "booking.manual_review",
             "booking.conflict_case", "waitlist.offer", "event.changed", "event.cancelled", "booking.changed",
             "booking.transfer_offered")
#: The conflict case's reason (services/conflict_cases.py CASE_REASON; not imported: that module
#: pulls the payment service into the notifier).
CASE_REASON = "places_taken_alternatives_offered"
#: Money going back because the organizer cancelled the offering: said as such.
_EVENT_CANCELLED_TYPES = ("booking.cancelled", "booking.refund_pending", "booking.refunded")

LABELS = {
    "en": {"what": "What", "when": "When", "where": "Where", "places": "Places", "amount": "Amount",
           "booking": "Booking", "paid": "Paid", "payment": "Payment", "paid_at": "Date", "receipt": "Receipt",
           "fiscal_receipt": "Fiscal receipt", "fiscal_sent": "sent to {address}",
           "open": "Open your booking", "accept_transfer": "Accept the booking", "pay": "Pay now", "refund_choice": "Give my money back",
           "before": "Before", "after": "Now", "footer":
           "Holdfast bookings. You receive this because a booking was made with this address.",
           "seats": ("seat", "seats"), "count": ("place", "places"), "unnamed": "booking {}"},
    "ru": {"what": "Что", "when": "Когда", "where": "Где", "places": "Места", "amount": "Сумма",
           "booking": "Бронь", "paid": "Оплачено", "payment": "Платёж", "paid_at": "Дата", "receipt": "Чек",
           "fiscal_receipt": "Кассовый чек", "fiscal_sent": "отправлен на {address}",
           "open": "Открыть бронь", "accept_transfer": "Принять бронь", "pay": "Оплатить", "refund_choice": "Вернуть мои деньги",
           "before": "Было",
           "after": "Стало", "footer": "Бронирование Holdfast. Это письмо пришло, потому что с этим адресом "
                                       "была оформлена бронь.",
           "seats": ("место", "места", "мест"), "count": ("место", "места", "мест"), "unnamed": "бронь {}"},
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
    #: An offering as it is now, by id (an order's further lines: each one's own start)
    offering_of: Callable[[str], dict[str, Any] | None] | None = None


#: A product's hook: ``(facts, values)``, adding to or changing the values a template renders with.
Hook = Callable[["Facts", dict[str, Any]], None]


@dataclass(frozen=True)
class MessageParts:
    """What a product's messages say beyond the core's (its ``Product.messages``)."""

    #: the package whose ``templates/mail/<language>/`` folder holds its types' templates
    package: str
    #: the message types it owns (a template each, in both languages) -> the values they add
    types: Mapping[str, Hook] = field(default_factory=dict)
    #: its words by language, added to ``LABELS`` for its types and its bookings (a pass's caption)
    labels: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: run for every message about one of its bookings before the facts are laid out: how its
    #: places read, the values its templates name, a pass to show
    booking: Hook | None = None

    def folder(self) -> str:
        return str(resources.files(self.package).joinpath("templates", "mail"))


def registered_parts() -> tuple[MessageParts, ...]:
    """Every registered product's ``MessageParts`` (imported on first use, like its other parts)."""
    from ..kinds import products

    return tuple(products.resolve(product.messages) for product in products.registered() if product.messages)


def owner(message_type: str) -> MessageParts | None:
    """The parts of the product owning a message type (None: the core's own, or nobody's)."""
    return next((parts for parts in registered_parts() if message_type in parts.types), None)


def _of_booking(booking: Booking | None) -> MessageParts | None:
    if booking is None:
        return None
    from ..kinds import products

    product = products.of_kind(booking.places.kind)
    return products.resolve(product.messages) if product is not None and product.messages else None


def _offers_alternatives(booking: Booking | None) -> bool:
    """Whether a late payment whose places went to someone else is offered other places (a kind
    that offers them: appointments), rather than only its money back."""
    if booking is None:
        return False
    from .. import kinds

    return kinds.of_booking(booking).offers_alternatives


def template_names() -> tuple[str, ...]:
    """The core's templates and every registered product's."""
    return TEMPLATES + tuple(name for parts in registered_parts() for name in parts.types)


def template_folders() -> tuple[str, ...]:
    """Where templates are looked up, the core's folder first."""
    core = str(resources.files("holdfast").joinpath("templates", "mail"))
    return (core, *(parts.folder() for parts in registered_parts()))


def template_name(message_type: str, booking: Booking | None) -> str:
    if booking is not None and booking.event_cancelled and message_type in _EVENT_CANCELLED_TYPES:
        return "event.cancelled"
    if message_type == "booking.manual_review" and booking is not None \
            and (booking.resolution or {}).get("reason") == CASE_REASON:
        return "booking.conflict_case"
    return message_type if message_type in TEMPLATES or owner(message_type) else "booking.changed"


def compose(store: Any, detail: dict[str, Any], site: Site | None = None, html: bool = True) -> Message:
    """The message for one notification: the booking and its offering as they are now, read
    from the store (``get_booking``, ``get_event``), and the change as the outbox event says.
    ``html`` False: the subject and the text only (what a notification's record keeps)."""
    booking = store.get_booking(str(detail["booking_id"])) if detail.get("booking_id") else None
    event_id = booking.event_id if booking is not None else detail.get("event_id")
    offering = store.get_event(str(event_id)) if event_id else None
    return render(str(detail.get("type", "")), detail, booking, offering, site or Site(), html)


def render(message_type: str, detail: dict[str, Any], booking: Booking | None, offering: dict[str, Any] | None,
           site: Site, html: bool = True) -> Message:
    name = template_name(message_type, booking)
    language = known(booking.language if booking is not None else detail.get("language"))
    values = Facts(message_type, name, detail, booking, offering or {}, site, language).values()
    text_env, html_env = _environments(template_folders())
    subject = " ".join(_block(text_env, language, name, "subject", values).split())
    text_body = _block(text_env, language, name, "body", values).strip()
    shared = {**values, "subject": subject}
    text = text_env.get_template("base.txt").render(shared, body=text_body).strip() + "\n"
    if not html:
        return Message(subject, text)
    html_body = _block(html_env, language, name, "body", values).strip()
    paragraphs = [_markup()(" ".join(part.split())) for part in html_body.split("\n\n") if part.strip()]
    html = html_env.get_template("base.html").render(shared, paragraphs=paragraphs)
    return Message(subject, text, html, tuple(values["attachments"]), tuple(values["inline"]))


@functools.cache
def _environments(folders: tuple[str, ...]):  # noqa: ANN202 - two jinja2 Environments, imported on first use
    import jinja2

    common = {"loader": jinja2.FileSystemLoader(list(folders)), "undefined": jinja2.StrictUndefined,
              "trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": False}
    return jinja2.Environment(autoescape=False, **common), jinja2.Environment(autoescape=True, **common)


def _markup():  # noqa: ANN202
    from markupsafe import Markup

    return Markup


def _block(env: Any, language: str, name: str, block: str, values: dict[str, Any]) -> str:
    template = env.get_template(f"{language}/{name}.txt")
    return "".join(template.blocks[block](template.new_context(values)))


class Facts:
    """The values one template renders with: the common facts, what the booking's product adds,
    then the type's own (the core's, or its owner's). A product's hooks read it: ``template``,
    ``detail``, ``booking``, ``view``, ``labels``, ``language``, ``at``, ``money``, ``calendar``."""

    def __init__(self, message_type: str, template: str, detail: dict[str, Any], booking: Booking | None,
                 offering: dict[str, Any], site: Site, language: str) -> None:
        self.message_type, self.template, self.detail, self.booking = message_type, template, detail, booking
        self.offering, self.site, self.language = offering, site, language
        self.product, self.owner = _of_booking(booking), owner(template)
        self.labels = dict(LABELS[language])
        for parts in (self.product, self.owner):
            self.labels |= parts.labels.get(language, {}) if parts is not None else {}
        self.view = self._view()
        self.zone = self._zone()

    # ------------------------------------------------------------------------------ common
    def values(self) -> dict[str, Any]:
        booking, detail, labels = self.booking, self.detail, self.labels
        places = self.view.get("places") or {}
        values: dict[str, Any] = {
            "lang": self.language, "labels": labels, "message_type": self.message_type, "template": self.template,
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
            # what a late payment can lead to, as the booking's pages say it (domain/texts.py)
            "alternatives": _offers_alternatives(booking),
            "facts": [], "receipt": [], "actions": [], "choices": [], "changes": [],
            "attachments": [], "inline": [], "qr": "",
            # more passes than one (an order's tickets and its parking pass): (image source, caption)
            "passes": [],
        }
        lines = self._order_lines()
        if lines:   # an order: one message for the whole of it, each line named with what it costs
            values["places"] = "; ".join(lines)
        if self.product is not None and self.product.booking is not None:
            self.product.booking(self, values)
        values["facts"] = [(labels[key], value) for key, value in (
            ("what", values["name"]), ("when", values["when"]),
            ("where", ", ".join(part for part in (values["venue"], values["city"]) if part)),
            ("places", values["places"]), ("amount", values["amount"]), ("booking", values["booking_id"]))
            if value]
        if values["booking_url"]:
            values["actions"] = [(labels["open"], values["booking_url"])]
        if self.owner is not None:
            self.owner.types[self.template](self, values)
        else:
            own = getattr(self, "_" + self.template.replace(".", "_"), None)
            if own is not None:
                own(values)
        return values

    def _order_lines(self) -> list[str]:
        """An order's items (domain/pricing.py ``line_items``, the one place they are read from),
        each as "what: quantity x unit price"; none for a booking of one offering."""
        if self.booking is None or not (self.booking.kind_details or {}).get("lines"):
            return []
        return [f"{item.description}: {item.quantity} × {self.money(item.unit.as_dict())}"
                for item in pricing.line_items(self.booking)]

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
        quantity = places.get("quantity")
        return words.count(int(quantity), self.language, self.labels["count"]) if quantity else ""

    def _start_end(self) -> tuple[str | None, str | None]:
        places = self.view.get("places") or {}
        start = places.get("starts_at") or places.get("from") or self.offering.get("starts_at")
        return start, places.get("ends_at") or places.get("to") or self.offering.get("ends_at")

    def calendar(self, values: dict[str, Any], method: str, sequence: int) -> None:
        """The booking's calendar file: one entry, or one per part of a booking of several (an
        order's lines: ``values["calendar_entries"]``, set by its product's hook)."""
        if self.booking is None:
            return
        from .message_files import CalendarEntry, calendar_of

        entries = values.get("calendar_entries")
        if entries is None:
            start, end = self._start_end()
            if not start:
                return
            where = ", ".join(part for part in (values["venue"], values["city"]) if part)
            entries = [CalendarEntry(uid=f"booking-{self.booking.booking_id}@holdfast", summary=values["name"],
                                     start=start, end=end, location=where)]
        if not entries:
            return
        data = calendar_of(entries, method=method, sequence=sequence, url=values["booking_url"],
                           stamp=str(self.detail.get("at") or self.booking.updated_at), organizer=self.site.sender,
                           attendee=self.booking.contact_email)
        values["attachments"].append(Attachment("booking.ics", f"text/calendar; method={method}; charset=UTF-8", data))

    def sequence(self) -> int:
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
        values["receipt"] += self._fiscal("payment")
        self.calendar(values, "PUBLISH", self.sequence())

    def _fiscal(self, kind: str) -> list[tuple[str, str]]:
        """The row saying the fiscal receipt of ``kind`` (payment, refund) was sent and where, when
        the booking's view lists it (services/booking_views.py ``receipts_view``, the one place)."""
        for receipt in self.view.get("receipts") or ():
            if receipt.get("type") == kind and receipt.get("status") == "issued" and receipt.get("sent_to"):
                return [(self.labels["fiscal_receipt"], self.labels["fiscal_sent"].format(address=receipt["sent_to"]))]
        return []

    def _booking_held(self, values: dict[str, Any]) -> None:
        values["actions"] = [(self.labels["pay"], values["pay_url"])] if values["pay_url"] else []

    _booking_hold_expiring = _booking_held
    _waitlist_offer = _booking_held

    def _booking_transfer_offered(self, values: dict[str, Any]) -> None:
        """To the address a booking is offered to: its one action is the link that accepts it (the
        holder's own booking page is not theirs to open)."""
        values["transfer_until"] = self.at(self.detail.get("transfer_expires_at"))
        values["actions"] = [(self.labels["accept_transfer"], str(self.detail.get("accept_url") or ""))]

    def _booking_refund_pending(self, values: dict[str, Any]) -> None:
        values["refund"] = self._refund_amount()
        values["no_show"] = "no_show" in str(self.detail.get("reason") or "")
        self.calendar(values, "CANCEL", self.sequence() + 1)

    def _booking_refunded(self, values: dict[str, Any]) -> None:
        values["refund"] = self._refund_amount()
        values["receipt"] = self._fiscal("refund")

    def _booking_cancelled(self, values: dict[str, Any]) -> None:
        values["kept"] = values["status"] == "CANCELLED_NO_REFUND"
        if values["kept"]:
            self.calendar(values, "CANCEL", self.sequence() + 1)

    def _event_cancelled(self, values: dict[str, Any]) -> None:
        values["refund"] = self._refund_amount() if self.message_type != "booking.cancelled" else ""
        values["refunded"] = self.message_type == "booking.refunded"
        if self.message_type == "booking.refund_pending":
            self.calendar(values, "CANCEL", self.sequence() + 1)

    def _booking_manual_review(self, values: dict[str, Any]) -> None:
        reason = str(((self.booking.review if self.booking else None) or {}).get("reason") or "default")
        reason = reason.split("_rejected_")[0]
        values["reason"] = reason if reason in REVIEW_REASONS else "default"
        values["next_step"] = next_step(reason, self.language)

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
            self.calendar(values, "PUBLISH", int(self.detail.get("version") or self.sequence()))

    def _changed(self, field: str, value: Any) -> str:
        return self.at(value) if field == "starts_at" and value else str(value or "")

    def _refund_amount(self) -> str:
        booking = self.booking
        if booking is None:
            return ""
        refund = (booking.payment.refund if booking.payment else None) or {}
        amount = refund.get("amount") if isinstance(refund.get("amount"), dict) else None
        return self.money(amount or booking.amount.as_dict())
