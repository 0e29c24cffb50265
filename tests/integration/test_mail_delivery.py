"""Mail over HTTP on the local stack (issue 33): the notifier sends through SES (the emulator's),
and the local inbox at /dev/mail shows what went out. An address typed into a booking that is not
the customer's own gets exactly one message, the request to confirm it; after the link is used, the
next message arrives. A bounced address, reported through the configuration set's topic to the real
feedback function, gets nothing more."""
from __future__ import annotations

import re
import time
import uuid
from email.message import EmailMessage

import pytest
import requests

from holdfast.services.mail_policy import CONFIRM_SUBJECT, address_key
from tests.support.flows import customer

pytestmark = pytest.mark.integration


def _address() -> str:
    return f"friend-{uuid.uuid4().hex[:8]}@example.org"


def _inbox(api, address: str, at_least: int = 0, timeout: float = 20.0) -> list[dict]:
    """The inbox of one address, once it holds ``at_least`` messages: the notifier records a
    message before it sends it, so a recorded one may still be on its way."""
    deadline = time.monotonic() + timeout
    while True:
        answer = requests.get(f"{api.base}/dev/mail/messages", params={"to": address}, timeout=10)
        assert answer.status_code == 200, answer.text
        messages = answer.json()["messages"]
        if len(messages) >= at_least or time.monotonic() >= deadline:
            return messages
        time.sleep(0.1)


def _note(who: str, booking_id: str, kind: str, timeout: float = 20.0) -> dict:
    """The notification recorded for one change, once the notifier has taken it from its queue."""
    from holdfast import wiring

    deadline = time.monotonic() + timeout
    while True:
        notes = [n for n in wiring.store().list_notifications(who)
                 if n["booking_id"] == booking_id and n["type"] == kind]
        if notes:
            return notes[0]
        assert time.monotonic() < deadline, (f"no {kind} notification for {booking_id}",
                                             wiring.store().list_notifications(who))
        time.sleep(0.1)


def _hold(api, event_id: str, who: str, address: str) -> str:
    answer = api.book(event_id, who, {"quantity": 1, "contact_email": address})
    assert answer.status_code == 201, answer.text
    return answer.json()["booking_id"]


def _confirm_link(message: dict) -> str:
    return re.search(r"(http://\S+/contacts/confirm\?token=\S+)", message["text"]).group(1)


def test_an_unconfirmed_address_gets_one_message_and_after_confirming_the_next_one(api):
    who, address = customer(), _address()
    event = api.create_event(capacity=5)
    first = _hold(api, event["event_id"], who, address)
    assert _note(who, first, "booking.held")["delivery"] == "unconfirmed"
    assert api.cancel(first, who).json()["status"] == "CANCELLED"
    assert _note(who, first, "booking.cancelled")["delivery"] == "unconfirmed"
    second = _hold(api, event["event_id"], who, address)
    assert _note(who, second, "booking.held")["delivery"] == "unconfirmed"

    [request] = _inbox(api, address, 1)
    assert request["subject"] == CONFIRM_SUBJECT and first not in request["text"]
    link = _confirm_link(request)
    assert link.startswith(f"{api.base}/contacts/confirm?token=")
    # opening the link shows a button; only its POST confirms
    page = requests.get(link, headers={"Accept": "text/html"}, timeout=10)
    assert page.status_code == 200 and '<form method="post"' in page.text
    assert "sandbox" not in page.headers["Content-Security-Policy"] and "form-action 'self'" in page.headers[
        "Content-Security-Policy"]
    spoiled = requests.post(link[:-3], timeout=10)
    assert spoiled.status_code == 400 and spoiled.json()["error"]["code"] == "confirmation_invalid"
    assert api.cancel(second, who).json()["status"] == "CANCELLED"
    assert _note(who, second, "booking.cancelled")["delivery"] == "unconfirmed"   # a GET confirmed nothing
    confirmed = requests.post(link, timeout=10)
    assert confirmed.status_code == 200 and confirmed.json() == {"confirmed": True}
    assert requests.post(link, timeout=10).status_code == 200                     # a second click

    third = _hold(api, event["event_id"], who, address)
    assert _note(who, third, "booking.held")["delivery"] == "sent"
    messages = _inbox(api, address, 2)
    assert len(messages) == 2 and third in messages[1]["text"]
    # the held-back messages were not delivered afterwards
    assert not any(first in m["text"] or second in m["text"] for m in messages)


def test_a_bounced_address_gets_nothing_more(api, system):
    who, address = customer(), _address()
    event = api.create_event(capacity=5)
    first = _hold(api, event["event_id"], who, address)
    _note(who, first, "booking.held")
    [request] = _inbox(api, address, 1)
    assert requests.post(_confirm_link(request), timeout=10).status_code == 200

    bounced = requests.post(f"{api.base}/dev/mail/bounce", json={"address": address}, timeout=10)
    assert bounced.status_code == 202, bounced.text
    # the feedback function (subscribed to the topic) put the address on the suppression list
    stack = system["stack"]
    item = stack.boto3_client("dynamodb").get_item(
        TableName=stack.resources["BookingsTable"], ConsistentRead=True,
        Key={"pk": {"S": f"MAIL#{address_key(address)}"}, "sk": {"S": "SUPPRESSED"}}).get("Item")
    assert item and item["reason"]["S"] == "bounce" and address not in str(item)

    second = _hold(api, event["event_id"], who, address)
    assert _note(who, second, "booking.held")["delivery"] == "suppressed"
    stranger = customer()
    third = _hold(api, event["event_id"], stranger, address)                     # anyone's booking
    assert _note(stranger, third, "booking.held")["delivery"] == "suppressed"
    assert len(_inbox(api, address)) == 1
    refused = requests.post(f"{api.base}/dev/mail/bounce", json={"address": "not an address"}, timeout=10)
    assert refused.status_code == 400


def test_the_inbox_lists_a_message_and_serves_its_html_and_attachment(api, system):
    """Stored directly through SES, as a rendered message with HTML and a file will be."""
    address = _address()
    calendar = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n"
    mime = EmailMessage()
    mime["Subject"], mime["From"], mime["To"] = "Your tickets", "bookings@holdfast.localhost", address
    mime.set_content("Your tickets are attached.")
    mime.add_alternative('<p>Your <b>tickets</b></p><img src="cid:qr1"><script>alert(1)</script>', subtype="html")
    mime.add_attachment(calendar, maintype="text", subtype="calendar", filename="event.ics")
    mime.get_body(preferencelist=("html",)).add_related(b"\x89PNG\r\n", maintype="image", subtype="png",
                                                        cid="<qr1>")
    ses = system["stack"].boto3_client("sesv2")
    ses.send_email(FromEmailAddress="bookings@holdfast.localhost", Destination={"ToAddresses": [address]},
                   Content={"Raw": {"Data": mime.as_bytes()}})

    [message] = _inbox(api, address, 1)
    assert message["subject"] == "Your tickets" and message["text"].strip() == "Your tickets are attached."
    assert message["has_html"] and {"name": "event.ics", "type": "text/calendar", "size": len(calendar)} in \
        message["attachments"]
    listing = requests.get(f"{api.base}/dev/mail", timeout=10)
    assert listing.status_code == 200 and address in listing.text and "Your tickets" in listing.text
    page = requests.get(f"{api.base}/dev/mail/{message['id']}", timeout=10)
    assert page.status_code == 200 and "<iframe sandbox" in page.text

    html = requests.get(f"{api.base}/dev/mail/{message['id']}/html", timeout=10)
    policy = html.headers["Content-Security-Policy"]
    assert html.status_code == 200 and "<b>tickets</b>" in html.text
    assert policy.startswith("sandbox") and "default-src 'none'" in policy and "script-src" not in policy
    image = next(n for n, a in enumerate(message["attachments"]) if a["type"] == "image/png")
    assert f'src="/dev/mail/{message["id"]}/attachments/{image}"' in html.text     # its QR, not the internet

    number = next(n for n, a in enumerate(message["attachments"]) if a["name"] == "event.ics")
    download = requests.get(f"{api.base}/dev/mail/{message['id']}/attachments/{number}", timeout=10)
    assert download.status_code == 200 and download.content == calendar
    assert download.headers["Content-Type"] == "text/calendar"
    assert download.headers["Content-Disposition"] == "attachment; filename*=UTF-8''event.ics"
    assert requests.get(f"{api.base}/dev/mail/nope/html", timeout=10).status_code == 404


def test_a_signed_in_customers_held_message_reaches_their_own_address_once_and_the_hold_wrote_no_standing(api):
    """Issue 35: the hold carries "the address is the identity's" (``contact_own``) on the booking
    and its outbox event instead of writing the address's standing on the request path; the held
    message still reaches the address, as sent (tests/handlers/test_notifier.py: once per batch and
    redelivery)."""
    from holdfast import wiring

    who, address = customer(), _address()
    event = api.create_event(capacity=5)
    answer = api.request("POST", f"/events/{event['event_id']}/bookings", customer=who, key=str(uuid.uuid4()),
                         json={"quantity": 1}, headers={"X-Customer-Email": address})
    assert answer.status_code == 201, answer.text
    booking_id = answer.json()["booking_id"]
    assert _note(who, booking_id, "booking.held")["delivery"] == "sent"
    [message] = _inbox(api, address, 1)
    assert message["subject"] != CONFIRM_SUBJECT and booking_id in message["text"]
    assert wiring.mail_policy().contact(who, address_key(address)) is None   # nothing written for it
