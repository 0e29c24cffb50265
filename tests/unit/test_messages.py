"""Every message type, rendered in English and Russian, against golden files read by eye.

The goldens are ``tests/unit/golden/messages/<case>.<language>.{subject,txt,html}``; a case is a
template name, with ``+<variant>`` for another product's or outcome's form of it. After changing
a template or the facts a message shows, regenerate them and read the diff (and the screenshots,
``make mail-screenshots``) before committing::

    HOLDFAST_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_messages.py -q -p no:randomly

Besides the goldens: every notification type the code can emit has a template in both languages
(found from the code itself, so a new type without one fails here), the HTML escapes what an
organizer or a customer typed, the calendar entries parse with icalendar and with vobject (same
UID, a higher SEQUENCE on a change, METHOD:CANCEL when the places end), and the parking pass's QR
image decodes back to the entry token the booking's view shows.
"""
from __future__ import annotations

import io
import os
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from holdfast import kinds
from holdfast.domain import lifecycle
from holdfast.domain.booking import Booking, Payment, PaymentMode
from holdfast.domain.inventory import Granule, Places
from holdfast.domain.money import Money
from holdfast.domain.statuses import BookingStatus
from holdfast.services import messages, transitions
from holdfast.services.messages import Site, render
from tests.support.handlers import REPO
from tests.unit.test_parking import KEYS

GOLDEN = Path(__file__).parent / "golden" / "messages"
REGENERATE = os.environ.get("HOLDFAST_REGENERATE_GOLDEN") == "1"
LANGUAGES = ("en", "ru")
PAGE = "http://127.0.0.1:3000/booking.html?id={booking_id}"
AT = "2030-01-01T12:05:00.000Z"


def _parking_view(booking: Booking) -> dict:
    """The kind's view extras signed with its product's keys, as wiring's booking_view_extras
    hands them: the unit tests' lot keys for parking, an event's ticket keys for events."""
    from holdfast.kinds import products
    from holdfast.products.events.tickets import EventKeys, TicketSigner

    kind = kinds.of_booking(booking)
    if products.of_kind(kind.name).name == "events":   # each ticket expiring with its event's start
        events = {offering["event_id"]: offering for offering in (CONCERT, YOGA, LOT)}
        offerings = SimpleNamespace(get_event=lambda event_id, consistent=False: events.get(event_id))
        return kind.view_extras(booking, TicketSigner(lambda: EventKeys(b"unit-tests-ticket-master-seed"), offerings))
    return kind.view_extras(booking, lambda: KEYS)


SITE = Site(booking_url=PAGE, sender="tickets@example.com", view_extras=_parking_view)

CONCERT = {"event_id": "e-1", "name": "Jazz <Night> & Friends", "venue": "Blue Hall", "city": "Moscow",
           "starts_at": "2030-02-01T17:00:00.000Z", "currency": "RUB", "catalog_version": 2}
YOGA = {"event_id": "s-1", "name": "Yoga", "venue": "", "city": "", "starts_at": "2030-01-01T12:00:00.000Z",
        "currency": "RUB", "resources": {"r-1": {"timezone": "Europe/Moscow", "open": "09:00", "close": "21:00"}}}
LOT = {"event_id": "l-1", "name": "Central parking", "venue": "", "city": "", "starts_at": "2030-01-01T12:00:00.000Z",
       "currency": "RUB", "settings": {"timezone": "Europe/Moscow", "hourly": "100.00", "daily_cap": "1000.00",
                                       "grace_minutes": 10}}


def booking(offering: dict, status: BookingStatus | str = BookingStatus.CONFIRMED, **changes) -> Booking:
    places = {
        "e-1": Places(kind="named", quantity=2, units=("UNIT#A1", "UNIT#A2")),
        "s-1": Places(kind="slots", quantity=1, granules=tuple(Granule("r-1", f"2030-01-02T07:{minute:02d}")
                                                               for minute in (0, 15, 30, 45))),
        "l-1": Places(kind="parking", quantity=1, granules=(Granule("l-1|R2", "2030-01-02T10:00"),
                                                             Granule("l-1|R2", "2030-01-02T10:30"))),
    }[offering["event_id"]]
    details = {"l-1": {"plate": "A123BC77", "vehicle_type": "REGULAR", "permit": False, "space_id": "R2",
                       "space_type": "REGULAR", "from": "2030-01-02T10:00:00.000Z", "to": "2030-01-02T11:00:00.000Z",
                       "timer_at": "2030-01-02T10:15:00.000Z", "timer_state": "NO_SHOW"}}.get(offering["event_id"])
    paid = Payment(idempotence_key="pay-b-1", state="CREATED", payment_id="2f1b5a9c-000f-5000-8000-1b2c3d4e5f60",
                   provider_status="succeeded", paid_at="2030-01-01T12:04:30.000Z")
    values = dict(booking_id="b-1", event_id=offering["event_id"], customer_id="ann@example.com",
                  status=lifecycle.status_of(str(status)), places=places,
                  amount=Money.parse({"e-1": "3000.00", "s-1": "700.00", "l-1": "100.00"}[offering["event_id"]], "RUB"),
                  payment_mode=PaymentMode.ONE_STAGE, hold_expires_at="2030-01-01T12:10:00.000Z",
                  created_at="2030-01-01T12:00:00.000Z", updated_at=AT, version=3, payment=paid,
                  contact_email="ann@example.com", kind_details=details)
    return Booking(**(values | changes))


def detail(kind: str, **extra) -> dict:
    return {"type": kind, "booking_id": "b-1", "customer_id": "ann@example.com", "version": 3, "at": AT,
            "hold_expires_at": "2030-01-01T12:10:00.000Z"} | extra


HELD = BookingStatus.HELD
CASE = {"reason": messages.CASE_REASON, "respond_by": "2030-01-02T06:00:00.000Z", "operator": "on-call",
        "alternatives": [{"starts_at": "2030-01-02T08:00:00.000Z", "ends_at": "2030-01-02T09:00:00.000Z",
                          "resource_id": "r-1", "available": 1},
                         {"starts_at": "2030-01-02T11:30:00.000Z", "ends_at": "2030-01-02T12:30:00.000Z",
                          "resource_id": "r-1", "available": 1}]}
RECEIPT = {"space_id": "R2", "entered_at": "2030-01-02T09:58:00.000Z", "exited_at": "2030-01-02T11:33:00.000Z",
           "minutes": 95, "hourly": {"value": "100.00", "currency": "RUB"}, "grace_minutes": 10,
           "daily_cap": {"value": "1000.00", "currency": "RUB"}, "charge": {"value": "200.00", "currency": "RUB"},
           "prepaid": {"value": "100.00", "currency": "RUB"}, "paid": {"value": "100.00", "currency": "RUB"}}
CHANGES = {"starts_at": {"before": "2030-02-01T17:00:00.000Z", "after": "2030-02-01T18:30:00.000Z"},
           "venue": {"before": "Blue Hall", "after": "Green Hall"}}

#: case -> (notification type, its detail, the booking, its offering)
CASES = {
    "booking.held": ("booking.held", detail("booking.held"), booking(CONCERT, HELD, payment=None), CONCERT),
    # a late payment for a slot taken meanwhile is offered other times: the held message says so
    "booking.held+appointment": ("booking.held", detail("booking.held"), booking(YOGA, HELD, payment=None), YOGA),
    "booking.hold_expiring": ("booking.hold_expiring", detail("booking.hold_expiring"),
                              booking(CONCERT, HELD, payment=None), CONCERT),
    "booking.confirmed": ("booking.confirmed", detail("booking.confirmed"), booking(CONCERT), CONCERT),
    "booking.confirmed+appointment": ("booking.confirmed", detail("booking.confirmed"), booking(YOGA), YOGA),
    "booking.confirmed+parking": ("booking.confirmed", detail("booking.confirmed"), booking(LOT), LOT),
    "booking.expired": ("booking.expired", detail("booking.expired"),
                        booking(CONCERT, BookingStatus.EXPIRED, payment=None), CONCERT),
    "booking.cancelled": ("booking.cancelled", detail("booking.cancelled", status="CANCELLED"),
                          booking(CONCERT, BookingStatus.CANCELLED, payment=None), CONCERT),
    "booking.cancelled+no_refund": ("booking.cancelled", detail("booking.cancelled", status="CANCELLED_NO_REFUND"),
                                    booking(LOT, "CANCELLED_NO_REFUND"), LOT),
    "booking.payment_failed": ("booking.payment_failed", detail("booking.payment_failed"),
                               booking(YOGA, BookingStatus.PAYMENT_FAILED, payment_mode=PaymentMode.TWO_STAGE), YOGA),
    "booking.refund_pending": ("booking.refund_pending", detail("booking.refund_pending", reason="customer cancelled"),
                               booking(CONCERT, BookingStatus.REFUND_PENDING), CONCERT),
    "booking.refunded": ("booking.refunded", detail("booking.refunded"),
                         booking(CONCERT, BookingStatus.REFUNDED), CONCERT),
    "booking.manual_review": ("booking.manual_review", detail("booking.manual_review"),
                              booking(CONCERT, BookingStatus.MANUAL_REVIEW, review={"reason": "amount_mismatch"}),
                              CONCERT),
    "booking.conflict_case": ("booking.manual_review", detail("booking.manual_review"),
                              booking(YOGA, BookingStatus.MANUAL_REVIEW, payment_mode=PaymentMode.TWO_STAGE,
                                      resolution=CASE), YOGA),
    "booking.no_show": ("booking.no_show", detail("booking.no_show", status="NO_SHOW"), booking(LOT, "NO_SHOW"), LOT),
    "waitlist.offer": ("waitlist.offer", detail("waitlist.offer"), booking(CONCERT, HELD, payment=None), CONCERT),
    "event.changed": ("event.changed", detail("event.changed", event_id="e-1", version=3, status="CONFIRMED",
                                              changes=CHANGES, change_refund_until="2030-01-04T12:05:00.000Z"),
                      booking(CONCERT), CONCERT | {"catalog_version": 3, "starts_at": "2030-02-01T18:30:00.000Z",
                                                   "venue": "Green Hall"}),
    "event.cancelled": ("booking.refund_pending", detail("booking.refund_pending", reason="event cancelled"),
                        booking(CONCERT, BookingStatus.REFUND_PENDING, event_cancelled=True),
                        CONCERT | {"catalog_version": 3}),   # after the change above
    "vehicle.entered": ("vehicle.entered", detail("vehicle.entered", at="2030-01-02T09:58:00.000Z"),
                        booking(LOT, "CHECKED_IN"), LOT),
    "vehicle.exited": ("vehicle.exited", detail("vehicle.exited", at="2030-01-02T11:33:00.000Z", receipt=RECEIPT),
                       booking(LOT, "COMPLETED"), LOT),
    # a booking offered to another address (services/transfers.py): its one action is the link
    "booking.transfer_offered": ("booking.transfer_offered", detail(
        "booking.transfer_offered", transfer_to="friend@example.com", transfer_id="t-1",
        accept_url="https://tickets.example.com/bookings/b-1/transfer/accept?token=t-1.secret",
        transfer_expires_at="2030-01-08T12:05:00.000Z"), booking(CONCERT), CONCERT),
    "booking.changed": ("booking.payment_pending", detail("booking.payment_pending", status="PAYMENT_PENDING"),
                        booking(CONCERT, BookingStatus.PAYMENT_PENDING), CONCERT),
}


def rendered(case: str, language: str):
    kind, values, subject_booking, offering = CASES[case]
    return render(kind, values, replace(subject_booking, language=language), offering, SITE)


# ------------------------------------------------------------------------------------ goldens

@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_message_matches_its_golden_files(case, language):
    message = rendered(case, language)
    assert messages.template_name(CASES[case][0], CASES[case][2]) == case.split("+")[0]
    for part, text in (("subject", message.subject + "\n"), ("txt", message.text), ("html", message.html)):
        path = GOLDEN / f"{case}.{language}.{part}"
        if REGENERATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert path.read_text(encoding="utf-8") == text, f"{path.name} differs (see the module's docstring)"


def test_no_golden_file_is_left_without_its_case():
    names = {f"{case}.{language}.{part}" for case in CASES for language in LANGUAGES
             for part in ("subject", "txt", "html")}
    assert sorted(path.name for path in GOLDEN.iterdir()) == sorted(names)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_two_languages_say_it_in_their_own_words(case):
    english, russian = rendered(case, "en"), rendered(case, "ru")
    assert english.subject != russian.subject and re.search("[а-яА-Я]", russian.text + russian.subject)
    assert not re.search("[а-яА-Я]", english.text + english.html)
    assert "{{" not in english.text + russian.text and "None" not in english.text + russian.text


# ------------------------------------------------------------------------------------ coverage

def emitted_types() -> set[str]:
    """Every notification type the code can put in an outbox or hand the notifier: the status
    changes customers hear about, the states kinds declare, and the literal types in the code
    (the waitlist's offer, the reminder, an event's change, a gate's pass)."""
    found = set(transitions.NOTIFIED.values())
    # the kinds of the shipped products only: a test's toy kind may be registered in this process
    from holdfast.kinds import products

    products.discover()
    shipped = {kind.name for product in products.registered() for kind in product.kinds
               if type(kind).__module__.startswith("holdfast.")}
    found |= {state.notify for owner, states in lifecycle.declarations().items() if owner in shipped
              for state in states if state.notify}
    literal = re.compile(r"""["'](?:type|outbox_type)["']?\s*[:=]\s*["']((?:booking|event|waitlist|vehicle)\.[a-z_]+)["']"""
                         r"""|^[A-Z_]*TYPE\s*=\s*["']([a-z]+\.[a-z_]+)["']""", re.M)
    for root in (REPO / "layers" / "holdfast" / "holdfast", REPO / "functions"):
        for path in root.rglob("*.py"):
            for match in literal.finditer(path.read_text(encoding="utf-8")):
                found.add(match.group(1) or match.group(2))
    return found


def test_the_scan_finds_the_types_it_must():
    assert {"booking.held", "booking.hold_expiring", "booking.no_show", "waitlist.offer", "event.changed",
            "vehicle.exited", "vehicle.entered", "booking.confirmed"} <= emitted_types()


@pytest.mark.parametrize("message_type", sorted(emitted_types()))
def test_every_type_the_code_emits_has_a_template_in_both_languages(message_type):
    name = messages.template_name(message_type, None)
    assert name == message_type, f"{message_type} would fall back to {name}: add templates/mail/<language>/{name}.txt"
    for language in LANGUAGES:
        assert any((Path(folder) / language / f"{name}.txt").is_file() for folder in messages.template_folders())


def test_every_template_exists_in_both_languages_and_nothing_else_does():
    """The core's folder holds its own templates, each product's folder the types it owns."""
    owned = {REPO / "layers/holdfast/holdfast/templates/mail": messages.TEMPLATES}
    for parts in messages.registered_parts():
        owned[Path(parts.folder())] = tuple(parts.types)
    assert len(owned) == len(messages.template_folders())
    for root, names in owned.items():
        for language in LANGUAGES:
            assert sorted(path.stem for path in (root / language).glob("*.txt")) == sorted(names), root
    assert {case.split("+")[0] for case in CASES} == set(messages.template_names())
    assert len(messages.template_names()) == len(set(messages.template_names()))


# ------------------------------------------------------------------------------------ escaping

@pytest.mark.parametrize("language", LANGUAGES)
def test_the_held_message_promises_other_places_only_where_the_kind_offers_them(language):
    """The booking page's rule (Kind.offers_alternatives, domain/texts.py's refund_only texts) in
    the message too: a concert's late payment gets its money back, an appointment's other times."""
    offered = {"en": "other places where there are any", "ru": "другие места"}[language]
    assert offered in rendered("booking.held+appointment", language).text
    assert offered not in rendered("booking.held", language).text
    assert offered not in rendered("booking.expired", language).text


def test_what_an_organizer_typed_is_text_in_the_html():
    message = rendered("booking.confirmed", "en")
    assert "Jazz &lt;Night&gt; &amp; Friends" in message.html and "<Night>" not in message.html
    assert "Jazz <Night> & Friends" in message.text and "Jazz <Night> & Friends" in message.subject


# ------------------------------------------------------------------------------------ files

def _calendar(message):
    [attachment] = message.attachments
    assert attachment.name == "booking.ics" and attachment.content_type.startswith("text/calendar; method=")
    return attachment


def _parsed(data: bytes):
    """The entry as icalendar reads it, checked against what vobject (a second parser) reads."""
    import icalendar
    import vobject

    cal = icalendar.Calendar.from_ical(data)
    [event] = cal.walk("VEVENT")
    other = vobject.readOne(data.decode())
    assert other.method.value == str(cal["METHOD"])
    assert other.vevent.uid.value == str(event["UID"]) and int(other.vevent.sequence.value) == int(event["SEQUENCE"])
    assert other.vevent.dtstart.value == event.decoded("DTSTART") and other.vevent.summary.value == str(event["SUMMARY"])
    return cal, event


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_confirmed_event_and_appointment_carry_a_calendar_entry_both_parsers_read(language):
    cal, event = _parsed(_calendar(rendered("booking.confirmed", language)).data)
    assert str(cal["METHOD"]) == "PUBLISH" and str(event["UID"]) == "booking-b-1@holdfast"
    assert event.decoded("DTSTART").isoformat() == "2030-02-01T17:00:00+00:00" and "DTEND" not in event
    assert str(event["SUMMARY"]) == "Jazz <Night> & Friends" and str(event["LOCATION"]) == "Blue Hall, Moscow"
    assert str(event["ORGANIZER"]) == "mailto:tickets@example.com" and str(event["ATTENDEE"]) == "mailto:ann@example.com"
    _, slot = _parsed(_calendar(rendered("booking.confirmed+appointment", language)).data)
    assert slot.decoded("DTSTART").isoformat() == "2030-01-02T07:00:00+00:00"
    assert slot.decoded("DTEND").isoformat() == "2030-01-02T08:00:00+00:00"


def test_a_change_updates_the_entry_with_a_higher_sequence_and_a_cancellation_withdraws_it():
    _, confirmed = _parsed(_calendar(rendered("booking.confirmed", "en")).data)
    _, changed = _parsed(_calendar(rendered("event.changed", "en")).data)
    cancel, cancelled = _parsed(_calendar(rendered("event.cancelled", "en")).data)
    assert str(confirmed["UID"]) == str(changed["UID"]) == str(cancelled["UID"])
    assert int(confirmed["SEQUENCE"]) < int(changed["SEQUENCE"]) < int(cancelled["SEQUENCE"])
    assert changed.decoded("DTSTART").isoformat() == "2030-02-01T18:30:00+00:00"
    assert str(changed["LOCATION"]) == "Green Hall, Moscow"
    assert str(cancel["METHOD"]) == "CANCEL" and str(cancelled["STATUS"]) == "CANCELLED"
    for case in ("booking.refund_pending", "booking.no_show", "booking.cancelled+no_refund"):
        withdrawn, _ = _parsed(_calendar(rendered(case, "en")).data)
        assert str(withdrawn["METHOD"]) == "CANCEL"


def test_only_a_change_of_a_confirmed_booking_touches_its_calendar_and_holds_carry_none():
    kind, values, subject_booking, offering = CASES["event.changed"]
    held = render(kind, values | {"status": "HELD"}, replace(subject_booking, status=BookingStatus.HELD), offering, SITE)
    assert held.attachments == () and "full refund" not in held.text
    for case in ("booking.held", "booking.expired", "booking.cancelled", "waitlist.offer", "booking.refunded"):
        assert rendered(case, "en").attachments == ()


def test_the_parking_pass_decodes_back_to_the_entry_token_the_booking_view_shows():
    import zxingcpp
    from PIL import Image

    message = rendered("booking.confirmed+parking", "ru")
    [image] = message.inline
    assert image.name == "pass.png" and image.content_type == "image/png" and 'src="cid:pass.png"' in message.html
    token = _parking_view(CASES["booking.confirmed+parking"][2])["entry_token"]
    [found] = zxingcpp.read_barcodes(Image.open(io.BytesIO(image.data)))
    assert found.text == token and found.format == zxingcpp.BarcodeFormat.QRCode
    # no pass without a token: an event's confirmation, or a parking booking no longer confirmed
    assert rendered("booking.confirmed", "en").inline == ()
    assert rendered("booking.cancelled+no_refund", "en").inline == ()


@pytest.mark.parametrize("message_type", [name for name in messages.template_names()
                                          if name not in ("booking.conflict_case", "event.cancelled")])
def test_a_message_renders_when_its_booking_or_offering_is_gone(message_type):
    """A booking read back as nothing (or an offering deleted) still gives its customer a message
    rather than a notifier stuck retrying it."""
    message = render(message_type, detail(message_type), None, None, Site())
    assert message.subject.strip() and message.text.strip() and message.html.strip()
    assert "None" not in message.subject + message.text and message.attachments == () == message.inline


# ------------------------------------------------------------------------------------ words

@pytest.mark.parametrize("number, russian", [(1, "1 место"), (2, "2 места"), (4, "4 места"), (5, "5 мест"),
                                             (11, "11 мест"), (12, "12 мест"), (14, "14 мест"), (21, "21 место"),
                                             (22, "22 места"), (25, "25 мест"), (101, "101 место"), (111, "111 мест")])
def test_russian_counts_take_their_three_forms(number, russian):
    from holdfast.services.message_words import count

    assert count(number, "ru", ("место", "места", "мест")) == russian
    assert count(number, "en", ("place", "places")) == f"{number} place" + ("" if number == 1 else "s")


def test_amounts_dates_and_ranges_in_each_language():
    from holdfast.services.message_words import NBSP, date_time, money, time_range

    amount = {"value": "1234567.5", "currency": "RUB"}
    assert money(amount, "en") == "₽1,234,567.50" and money(amount, "ru") == f"1{NBSP}234{NBSP}567,50{NBSP}₽"
    assert money({"value": "-5", "currency": "XYZ"}, "en") == f"-XYZ{NBSP}5.00"
    assert date_time("2030-03-31T21:30:00.000Z", "Europe/Moscow", "ru") == "1 апреля 2030, 00:30 (Europe/Moscow)"
    assert date_time("2030-03-31T21:30:00.000Z", "Not/AZone", "en") == "31 March 2030, 21:30 (UTC)"
    assert time_range("2030-01-01T22:00:00Z", "2030-01-02T01:00:00Z", "UTC", "en") == \
        "1 January 2030, 22:00 – 2 January 2030, 01:00 (UTC)"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_review_reason_the_domain_names_has_its_own_words(language):
    """domain/review_steps.py says what happens next for each review reason; the message says the
    same in both languages, so a new reason without its words falls to the default and fails here."""
    from holdfast.domain.review_steps import REVIEW_REASONS, next_step

    kind, values, subject_booking, offering = CASES["booking.manual_review"]

    def said(reason):
        return render(kind, values, replace(subject_booking, language=language, review={"reason": reason}),
                      offering, SITE).text.split("\n\n")[0]

    default = said("default")
    for reason in set(REVIEW_REASONS) - {"default"}:
        assert said(reason) != default, reason
    assert said("refund_rejected_insufficient_funds") == said("refund")
    if language == "en":   # the English words are the domain's own sentences
        assert {said(reason) for reason in REVIEW_REASONS} == {next_step(reason) for reason in REVIEW_REASONS}
