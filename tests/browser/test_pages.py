"""The customer and operator pages in Chromium against the local stack: what a person sees and
does, end to end. Each test creates its own event, so they share one stack and one browser."""
from __future__ import annotations

import re
import time
import uuid
from datetime import timedelta

import pytest

from holdfast.clock import system_clock
from tests.browser.conftest import HOW_TO_GET_A_BROWSER
from tests.support.handlers import REPO
from tests.support import toy_windows
from tests.support.flows import booked_and_paying, customer, move_past_the_hold
from tests.support.stack_time import year_ahead

try:
    from playwright.sync_api import expect
except ImportError:
    pytest.fail(f"Playwright for Python is not installed. {HOW_TO_GET_A_BROWSER}", pytrace=False)

pytestmark = pytest.mark.integration

#: The year of the pages' fixed dates (March to June): the first in which they are months ahead on
#: the stack's clock, read when the module is; the tests write the month and day they mean.
YEAR = year_ahead("03-10")


def published(api, **fields):
    event = api.create_event(**fields)
    answer = api.request("POST", f"/events/{event['event_id']}/publish", organizer=True)
    assert answer.status_code == 200, answer.text
    return event


def seat(page, seat_id):
    return page.locator(f'.seat[data-seat="{seat_id}"]')


def test_pick_two_seats_hold_pay_and_see_them_sold_on_another_map(site, customer_page, shots):
    api = site["api"]
    event = published(api, name="Quartet evening", venue="Small hall", category="concert", capacity=None,
                      seat_map={"rows": [{"name": row, "seats": 8} for row in "ABC"]})
    alice, bob = customer_page(customer()), customer_page(customer())

    alice.goto("/")
    expect(alice.get_by_role("link", name=re.compile("Quartet evening"))).to_be_visible()
    shots(alice, "catalog")
    alice.get_by_role("link", name=re.compile("Quartet evening")).click()
    expect(seat(alice, "B-4")).to_have_attribute("data-state", "available")
    seat(alice, "B-4").click()
    seat(alice, "B-5").focus()              # the second seat by keyboard
    alice.keyboard.press("Enter")
    expect(seat(alice, "B-5")).to_have_attribute("aria-pressed", "true")
    expect(alice.locator("#picked")).to_contain_text("B-4, B-5")
    shots(alice, "event-seat-map", full_page=True)
    alice.get_by_role("button", name="Hold", exact=True).click()

    expect(alice).to_have_url(re.compile(r"/booking\.html\?id="))
    expect(alice.locator("#status")).to_have_attribute("data-status", "HELD")
    expect(alice.locator("#countdown")).to_have_text(re.compile(r"^(9|10):\d\d$"))
    # what a late payment does is the API's own sentence (GET /texts), as the engine does it
    expect(alice.locator("#after")).to_contain_text("A payment that reaches us later confirms the booking if the "
                                                    "places are still free")
    # an event offers no other places to a late payment whose seats went: only the money back
    expect(alice.locator("#after")).to_contain_text("otherwise your money is given back")
    expect(alice.locator("#after")).not_to_contain_text("other places")
    shots(alice, "booking-held")
    booking_url = alice.url

    alice.get_by_role("button", name="Pay").click()
    expect(alice).to_have_url(re.compile(r"/checkout/"))       # the sandbox's payment page
    alice.get_by_role("button", name="Pay").click()
    expect(alice).to_have_url(booking_url)                     # back through return_url
    expect(alice.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(alice.locator("#status")).to_have_text("Paid and confirmed")
    expect(alice.locator("#places")).to_have_text("Seats B-4, B-5")
    expect(alice.locator("#amount")).to_contain_text("2,000")
    expect(alice.locator("#journal")).to_contain_text("Paid while held; places sold")
    shots(alice, "booking-confirmed", full_page=True)

    seat_answers = []
    bob.on("response", lambda r: "/seats" in r.url and seat_answers.append(r.status))
    bob.goto(f"/event.html?id={event['event_id']}")
    for sold in ("B-4", "B-5"):
        expect(seat(bob, sold)).to_have_attribute("data-state", "sold")
        expect(seat(bob, sold)).to_be_disabled()
    deadline = time.monotonic() + 15    # the map is polled every second with If-None-Match (left at the first 304)
    while 304 not in seat_answers and time.monotonic() < deadline:
        bob.wait_for_timeout(200)
    assert seat_answers[0] == 200 and 304 in seat_answers, seat_answers
    alice.goto(f"/event.html?id={event['event_id']}")
    expect(seat(alice, "B-4")).to_have_attribute("data-state", "mine")
    expect(alice.locator("#sold")).to_have_text("2")


def test_a_short_hold_runs_out_and_the_page_says_what_happened(site, customer_page, shots):
    event = published(site["api"], name="Short hold night", capacity=5, hold_ttl_seconds=3)
    page = customer_page(customer(), width=390, height=760)     # a phone-sized screen
    page.goto(f"/event.html?id={event['event_id']}")
    page.get_by_label("Tickets").fill("2")
    page.get_by_role("button", name="Hold", exact=True).click()
    expect(page.locator("#countdown")).to_have_text(re.compile(r"^0:0[0-3]$"))
    shots(page, "phone-booking-held")
    expect(page.locator("#status")).to_have_attribute("data-status", "EXPIRED", timeout=15_000)
    expect(page.locator("#status")).to_have_text("Your hold ran out: nothing was charged")
    expect(page.locator("#explain")).to_have_text("Unpaid at the deadline; places released.")
    expect(page.locator("#pay")).to_be_hidden()
    shots(page, "phone-booking-expired")
    assert site["api"].counts(event["event_id"]) == {"available": 5, "held": 0, "sold": 0}


def test_two_customers_race_for_one_seat_one_wins_the_other_is_told(site, customer_page):
    event = published(site["api"], name="Last seat", capacity=None,
                      seat_map={"rows": [{"name": "A", "seats": 3}]})
    first, second = customer_page(customer()), customer_page(customer())
    for page in (first, second):
        page.goto(f"/event.html?id={event['event_id']}")
        seat(page, "A-2").click()
        expect(seat(page, "A-2")).to_have_attribute("aria-pressed", "true")
    # both press Hold before either answer is back
    first.locator("#hold").dispatch_event("click")
    second.locator("#hold").dispatch_event("click")

    def outcome(page):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if "/booking.html" in page.url:
                return "won"
            if page.locator("#hold-error").is_visible():
                return "told"
            page.wait_for_timeout(50)
        raise AssertionError(f"neither a booking nor an error on {page.url}")

    results = {outcome(first): first, outcome(second): second}
    assert set(results) == {"won", "told"}, results
    loser = results["told"]
    expect(loser.locator("#hold-error")).to_contain_text("taken or held by someone else.")
    expect(loser.locator("#hold-error")).not_to_contain_text("{")
    expect(seat(loser, "A-2")).to_have_attribute("data-state", "held")
    expect(seat(loser, "A-2")).to_have_attribute("aria-pressed", "false")

    loser.get_by_label("Best available").fill("1")       # let the engine choose instead
    loser.get_by_role("button", name="Hold the best 1").click()
    expect(loser.locator("#status")).to_have_attribute("data-status", "HELD")
    expect(loser.locator("#places")).to_have_text(re.compile(r"^Seats A-(1|3)$"))


def test_sold_out_join_the_waitlist_see_the_position_then_the_offer(site, customer_page, shots):
    api = site["api"]
    event = published(api, name="Tiny room", capacity=1)
    rival = customer()
    taken = api.book(event["event_id"], rival, {"quantity": 1})
    assert taken.status_code == 201, taken.text

    page = customer_page(customer())
    page.goto(f"/event.html?id={event['event_id']}")
    expect(page.get_by_role("heading", name="Sold out")).to_be_visible()
    expect(page.locator("#buy")).to_be_hidden()
    page.get_by_role("button", name="Join the waitlist").click()
    expect(page.locator("#waitlist-text")).to_contain_text("You are number 1 on the waitlist")
    shots(page, "waitlist-position")

    assert api.cancel(taken.json()["booking_id"], rival).status_code == 200
    expect(page.locator("#waitlist-text")).to_contain_text("Your turn came", timeout=15_000)
    page.get_by_role("link", name="Pay for them on your booking page").click()
    expect(page.locator("#status")).to_have_attribute("data-status", "HELD")
    expect(page.locator("#places")).to_have_text("1 place")


def test_operator_creates_an_event_and_resolves_a_review(site, customer_page, shots):
    api, sandbox = site["api"], site["control"]
    page = customer_page("operator-olga")
    page.goto("/operator.html")
    page.get_by_label("Organizer key").fill("local-organizer-key")
    page.get_by_label("Your name").fill("olga")
    page.get_by_role("button", name="Use").click()

    console_page(page, "events")
    form = page.locator("#create")
    form.get_by_label("Name", exact=True).fill("Operator's own night")
    form.get_by_label("Venue", exact=True).fill("Cellar")
    form.get_by_label("City", exact=True).fill("Kazan")
    form.get_by_label("Starts", exact=True).fill(f"{YEAR}-06-01T19:30")
    form.get_by_label("Rows, as name:seats").fill("A:4, B:4")
    form.get_by_role("button", name="Create event").click()
    expect(page.locator("#create-result")).to_contain_text(
        'Created "Operator\'s own night" with 8 places and published it')
    console_page(page, "sales")
    expect(page.locator("#sales tr", has_text="Operator's own night")).to_contain_text("8")
    shots(page, "operator-create-and-sales")
    listed = api.request("GET", "/events", params={"city": "Kazan"}).json()["events"]
    assert [e["name"] for e in listed] == ["Operator's own night"]

    # a booking paid in time but reported after its place was resold: a case for an operator
    # (a hold of PAYING_HOLD's 5 s, tests/integration/conftest.py: long enough to pay on a loaded
    # machine, its tick before the payment's 15-second reconciliation limit; the clock moved past it)
    event = api.create_event(capacity=1, hold_ttl_seconds=5)
    who, rival = customer(), customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    sandbox.add_fault("hold", times=1, match={"object_id": payment_id})
    sandbox.add_fault("error_500_before", route="GET /v3/payments/{id}", times=1000)
    try:
        sandbox.pay(payment_id)
        assert move_past_the_hold(api, booking_id, who)["status"] == "EXPIRED"
        assert api.book(event["event_id"], rival).status_code == 201
    finally:
        sandbox.clear_faults()
    sandbox.release(object_id=payment_id)
    api.wait_status(booking_id, who, "MANUAL_REVIEW")

    console_page(page, "reviews")
    card = page.locator(f'article[data-booking="{booking_id}"]')
    expect(card).to_contain_text("Paid in time, but the places were resold")
    expect(card).to_contain_text("succeeded")
    card.locator("summary").click()
    expect(card.locator(".journal")).to_contain_text("Sent to our team for a check")    # the step, named
    expect(card.locator(".journal")).to_contain_text(re.compile(r"\(\w+\): "))           # and the engine's record
    card.get_by_label("Decision").select_option("refund")
    card.get_by_label("Note").fill("paid in time; refund agreed by phone")
    shots(page, "operator-review")
    card.get_by_role("button", name="Record decision").click()
    expect(card.locator(".notice")).to_contain_text("Done: the booking is now refund")
    expect(card.locator(".journal")).to_contain_text("olga")

    final = api.wait_status(booking_id, who, "REFUNDED")
    assert "olga" not in str(final["journal"])
    admin = api.request("GET", f"/admin/bookings/{booking_id}", organizer=True).json()
    assert any(e["ids"].get("operator") == "olga" and "refund agreed by phone" in e["decision"]
               for e in admin["journal"])

    # the sale's metrics, read from the local stack's logs as `holdfast.tools.cli metrics` reads them:
    # this case counted as a late payment sent to review, a review opened and resolved
    console_page(page, "sales")
    metrics = page.locator("#metrics")
    expect(metrics.locator("tr", has_text="Late payments: to review")).to_contain_text(
        re.compile(r"review\s*[1-9]"), timeout=15_000)
    expect(metrics.locator("tr", has_text="Reviews opened / resolved")).to_contain_text(
        re.compile(r"[1-9]\d* / [1-9]"), timeout=15_000)
    expect(metrics.locator("tr", has_text="Holds made")).not_to_contain_text(re.compile(r"made\s*0$"))


def test_a_high_demand_sale_goes_through_the_waiting_room(site, customer_page):
    event = published(site["api"], name="Big sale", capacity=50, high_demand=True)
    page = customer_page(customer())
    page.goto(f"/event.html?id={event['event_id']}")
    expect(page.locator("#room-text")).to_contain_text("Join the queue")
    expect(page.locator("#buy")).to_be_hidden()          # no booking without admission
    page.get_by_role("button", name="Join the queue").click()
    expect(page.locator("#room-text")).to_contain_text("It is your turn", timeout=15_000)
    page.get_by_label("Tickets").fill("2")
    page.get_by_role("button", name="Hold", exact=True).click()   # carries the admission token
    expect(page.locator("#status")).to_have_attribute("data-status", "HELD")


def slot(page, hhmm_utc):
    return page.locator(f'.slot[data-start="{YEAR}-03-10T{hhmm_utc}:00.000Z"]')


def test_pick_a_time_on_the_day_view_told_it_went_take_a_nearby_one_and_pay(site, customer_page, shots):
    api = site["api"]
    hall = api.create_resource(name="Studio hall")["resource_id"]
    yoga = api.create_service([hall], name="Morning yoga", capacity=8)
    hire = api.create_service([hall], name="Hall hire", mode="private", capacity=None, duration_minutes=90,
                              step_minutes=30, price={"value": "5000.00", "currency": "RUB"})
    # a class at 10:00-11:00 Moscow: the hall is not free for a hire overlapping it
    held = api.book_slot(yoga["service_id"], customer(), {"starts_at": f"{YEAR}-03-10T10:00:00+03:00",
                                                          "resource_id": hall, "quantity": 2})
    assert held.status_code == 201, held.text

    for service in (yoga, hire):     # found in the catalog's appointments once published
        answer = api.request("POST", f"/services/{service['service_id']}/publish", organizer=True)
        assert answer.status_code == 200, answer.text

    page = customer_page(customer(), width=390, height=900)      # a phone-sized screen
    page.goto("/index.html")
    page.locator("#services").get_by_role("link", name=re.compile("Hall hire")).click()
    expect(page).to_have_url(re.compile(r"/service\.html\?id="))
    # the page has read the service (its script runs and listens): a day picked before that would
    # change the field with nobody listening, and the day view would stay on today
    expect(page.locator("#name")).to_have_text("Hall hire")
    page.get_by_label("Day", exact=True).fill(f"{YEAR}-03-10")
    page.get_by_label("Day", exact=True).dispatch_event("change")
    expect(page.locator("#about")).to_contain_text("Europe/Moscow")
    expect(slot(page, "07:00")).to_contain_text(re.compile(r"10:00.*Taken"))     # 10:00 Moscow
    expect(slot(page, "07:00")).to_be_disabled()
    expect(slot(page, "08:00")).to_contain_text(re.compile(r"11:00.*Free"))
    page.get_by_role("button", name="Next day").click()
    expect(page.locator("#day")).to_have_value(f"{YEAR}-03-11")
    expect(slot(page, "07:00")).to_be_hidden()
    page.get_by_role("button", name="Previous day").click()
    expect(slot(page, "08:00")).to_be_enabled()

    slot(page, "08:00").focus()                  # by keyboard
    page.keyboard.press("Enter")
    expect(slot(page, "08:00")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#picked")).to_contain_text("11:00")
    # someone else takes that very time first
    rival = api.book_slot(hire["service_id"], customer(), {"starts_at": f"{YEAR}-03-10T11:00:00+03:00",
                                                           "resource_id": hall})
    assert rival.status_code == 201, rival.text
    page.get_by_role("button", name="Hold", exact=True).click()
    expect(page.locator("#hold-error")).to_be_visible()
    expect(page.locator("#hold-error")).not_to_contain_text("{")
    expect(slot(page, "08:00")).to_contain_text("Taken")
    nearest = page.locator("#nearby-times button").first
    expect(nearest).to_have_text(re.compile(r"12:30"))      # the next free start after 11:00-12:30
    shots(page, "appointment-day-view")     # the phone screen as seen: the hold bar stays in view
    nearest.click()
    expect(slot(page, "09:30")).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="Hold", exact=True).click()

    expect(page).to_have_url(re.compile(r"/booking\.html\?id="))
    expect(page.locator("#status")).to_have_attribute("data-status", "HELD")
    expect(page.locator("#amount")).to_contain_text("5,000")
    booking_url = page.url
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(re.compile(r"/checkout/"))
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(booking_url)
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(page.get_by_role("link", name="Back to the times")).to_have_attribute(
        "href", f"service.html?id={hire['service_id']}&date={YEAR}-03-10")
    [taken] = [s for s in api.availability(hire["service_id"], f"{YEAR}-03-10") if s["starts_at"] == f"{YEAR}-03-10T09:30:00.000Z"]
    assert taken["available"] == 0

    # the group class on the same hall: seats left per session, none where the hire now is
    page.goto(f"/service.html?id={yoga['service_id']}&date={YEAR}-03-10")
    expect(slot(page, "07:00")).to_contain_text(re.compile(r"10:00.*6 seats left"))
    expect(slot(page, "08:00")).to_contain_text(re.compile(r"11:00.*No seats left"))   # the hall is hired
    expect(slot(page, "08:00")).to_be_disabled()
    page.get_by_role("spinbutton", name="Seats").fill("7")
    expect(slot(page, "07:00")).to_be_disabled()                   # 7 seats do not fit in 6


def late_payment_conflict(api, sandbox):
    """A conflict case on the toy entry-windows kind (tests/support, registered in this process
    where the stack runs): a hold runs out, someone takes its 12:00 window, its payment arrives."""
    toy_windows.register()
    event = api.create_event(category="windowed", capacity=1, hold_ttl_seconds=5)   # as PAYING_HOLD
    who = customer()
    booking_id, payment_id = booked_and_paying(api, event, who)
    assert move_past_the_hold(api, booking_id, who)["status"] == "EXPIRED"   # the clock moved past it
    assert api.book(event["event_id"], customer()).status_code == 201     # someone takes the 12:00 window
    sandbox.pay(payment_id)
    api.wait_status(booking_id, who, "MANUAL_REVIEW")
    return who, booking_id, payment_id


def test_a_late_payment_whose_places_went_is_moved_to_an_offered_alternative(site, customer_page, shots):
    """The conflict case on the booking page: the kind's alternatives as buttons (the toy
    entry-windows kind of tests/support, registered in this process where the stack runs)."""
    api, sandbox = site["api"], site["control"]
    who, booking_id, payment_id = late_payment_conflict(api, sandbox)

    page = customer_page(who)
    page.goto(f"/booking.html?id={booking_id}")
    expect(page.locator("#status")).to_have_text("Your places went to someone else: choose what happens")
    expect(page.locator("#case-text")).to_contain_text("your money comes back by itself")
    expect(page.get_by_role("button", name="Give me my money back")).to_be_visible()
    choices = page.get_by_role("group", name="Other times you can have").get_by_role("button")
    expect(choices).to_have_text(["Window 12:30", "Window 13:00"])
    shots(page, "booking-late-payment-choices")
    choices.first.click()
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(page.locator("#case")).to_be_hidden()
    assert api.booking(booking_id, who)["places"]["window"] == "12:30"
    assert sandbox.payment(payment_id)["status"] == "succeeded"


def test_a_conflict_case_emails_link_marks_its_choice_and_one_press_takes_it(site, customer_page):
    """Issue 33: the conflict case's message (rendered by the notifier on the stack, its links
    PaymentReturnUrl's booking page) links each alternative; the link marks it on the page, and
    the customer's press, not the visit, takes it."""
    from holdfast import wiring

    api, sandbox = site["api"], site["control"]
    who, booking_id, payment_id = late_payment_conflict(api, sandbox)
    deadline, notes = time.monotonic() + 15, []
    while time.monotonic() < deadline and not any(n["type"] == "booking.manual_review" for n in notes):
        time.sleep(0.1)   # the relay, the bus and the queue deliver asynchronously
        notes = wiring.store().list_notifications(who)
    [case] = [n for n in notes if n["type"] == "booking.manual_review"]
    links = dict(re.findall(r"^(.+?): (http://\S+choice=\S+)$", case["message"], re.M))
    assert set(links) == {"window 12:30", "window 13:00", "Give my money back"}, case["message"]

    page = customer_page(who)
    page.goto(links["window 13:00"])
    choices = page.get_by_role("group", name="Other times you can have").get_by_role("button")
    expect(choices).to_have_text(["Window 12:30", "Window 13:00"])
    expect(choices.nth(1)).to_have_class(re.compile("suggested"))
    expect(choices.nth(1)).to_be_focused()
    expect(choices.first).not_to_have_class(re.compile("suggested"))
    assert api.booking(booking_id, who)["status"] == "MANUAL_REVIEW"     # opening the link decided nothing
    choices.nth(1).click()
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    assert api.booking(booking_id, who)["places"]["window"] == "13:00"


AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"


def serious_accessibility_problems(page) -> list[str]:
    """axe-core (the npm package `make test` installs) run inside the page as it is now: each
    serious or critical violation with the elements it found. Evaluated through the browser's
    protocol, so the page's own Content-Security-Policy stays as it is."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: `make test` installs it (npm ci, package-lock.json).", pytrace=False)
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text() + "\n;undefined")
    found = page.evaluate("""async () => {
        const result = await axe.run(document, { resultTypes: ["violations"] });
        return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    }""")
    return found


def publish(api, path):
    answer = api.request("POST", path, organizer=True)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_catalog_shows_events_services_and_lots_in_both_languages_and_passes_axe(site, customer_page, shots):
    api = site["api"]
    town = f"Town {uuid.uuid4().hex[:8]}"      # this test's own city: the filter shows only its offerings
    published(api, name="Catalog jazz night", city=town, starts_at=f"{YEAR}-04-01T17:00:00Z")
    hall = api.create_resource(name="Catalog studio")["resource_id"]
    service = api.create_service([hall], name="Catalog massage", city=town)
    publish(api, f"/services/{service['service_id']}/publish")
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Catalog car park", "city": town, "timezone": "Europe/Moscow",
        "spaces": [{"space_id": "R1", "type": "REGULAR"}, {"space_id": "R2", "type": "REGULAR"},
                   {"space_id": "H1", "type": "HANDICAP"}],
        "tariff": {"hourly": {"value": "150.00", "currency": "RUB"}}}).json()
    publish(api, f"/lots/{lot['lot_id']}/publish")
    api.create_service([hall], name="Catalog draft", city=town)         # never published: never listed

    page = customer_page(customer(), width=1280, height=900)
    page.goto("/index.html")
    page.get_by_label("City").fill(town)
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#events li")).to_have_count(1)
    expect(page.locator("#events").get_by_role("link", name=re.compile("Catalog jazz night"))).to_be_visible()
    expect(page.locator("#services li")).to_have_count(1)
    expect(page.locator("#services").get_by_role("link", name=re.compile("Catalog massage"))).to_have_attribute(
        "href", f"service.html?id={service['service_id']}")
    expect(page.locator("#lots li")).to_have_text(
        re.compile(r"Catalog car park.*RUB\s?150\.00 an hour.*3 spaces: regular: 2, accessible: 1"))
    expect(page.locator("#lots").get_by_role("link", name=re.compile("Catalog car park"))).to_have_attribute(
        "href", f"lot.html?lot_id={lot['lot_id']}")
    assert serious_accessibility_problems(page) == []
    shots(page, "catalog-en-desktop", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "catalog-en-phone", full_page=True)

    page.get_by_label("Language").select_option("ru")           # reloads the page in Russian
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator("h1")).to_have_text("Каталог")
    page.get_by_label("Город").fill(town)
    page.get_by_role("button", name="Найти").click()
    for shelf in ("events", "services", "lots"):
        expect(page.locator(f"#{shelf} li")).to_have_count(1)
    expect(page.locator("#lots li")).to_have_text(re.compile(r"150,00\s₽ в час.*3 места"))
    expect(page.locator("#services li")).to_contain_text("60 минут")
    expect(page.locator("#events li")).to_contain_text(f"{YEAR}")
    assert serious_accessibility_problems(page) == []
    shots(page, "catalog-ru-phone", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    assert serious_accessibility_problems(page) == []
    shots(page, "catalog-ru-desktop", full_page=True)

    page.reload()                                                 # the choice is remembered
    expect(page.locator("h1")).to_have_text("Каталог")
    page.get_by_label("Язык").select_option("en")
    expect(page.locator("h1")).to_have_text("Catalog")


def test_the_pass_image_decodes_to_the_entry_token_and_a_gate_opens_with_it(site, customer_page):
    import io

    import zxingcpp
    from PIL import Image

    api, sandbox, who = site["api"], site["control"], customer()
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Pass lot", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}}).json()
    gate = api.request("POST", f"/lots/{lot['lot_id']}/gates", organizer=True, json={"name": "Main"}).json()
    # a window to the minute, off the half hour, starting a little ahead: the lot's early entry
    # (15 minutes) lets the car in now
    start = system_clock().replace(second=0, microsecond=0) + timedelta(minutes=2)
    if start.minute % 30 == 0:
        start += timedelta(minutes=1)
    held = api.request("POST", f"/lots/{lot['lot_id']}/reservations", customer=who, key=str(uuid.uuid4()), json={
        "vehicle_type": "REGULAR", "plate": "A123BC77", "from": start.isoformat(),
        "to": (start + timedelta(minutes=90)).isoformat()}).json()
    assert held["amount"] == {"value": "200.00", "currency": "RUB"}, held      # 90 minutes: two started hours
    page = customer_page(who)
    pass_url = f"{site['stack'].api_url}/bookings/{held['booking_id']}/pass.svg"
    unpaid = page.request.get(pass_url, headers={"X-Customer-Id": who})
    assert unpaid.status == 404 and unpaid.json()["error"]["code"] == "no_pass"
    payment = api.pay(held["booking_id"], who)
    assert payment.status_code == 201, payment.text
    sandbox.pay(payment.json()["payment_id"])
    token = api.wait_status(held["booking_id"], who, "CONFIRMED")["entry_token"]

    served = page.request.get(pass_url, headers={"X-Customer-Id": who})
    assert served.status == 200 and served.headers["content-type"] == "image/svg+xml"
    assert served.headers["cache-control"] == "private, no-store"
    assert page.request.get(pass_url, headers={"X-Customer-Id": customer()}).status == 403
    # the picture as Chromium draws it, read back by a QR decoder: exactly the token
    page.set_content(f'<body style="margin:0;background:#fff"><div id="pass" style="width:600px">{served.text()}</div>'
                     "<style>#pass svg{width:600px;height:600px}</style></body>")
    drawn = Image.open(io.BytesIO(page.locator("#pass svg").screenshot()))
    decoded = zxingcpp.read_barcodes(drawn)
    assert [(code.format, code.text) for code in decoded] == [(zxingcpp.BarcodeFormat.QRCode, token)]
    entered = api.request("POST", f"/lots/{lot['lot_id']}/gates/{gate['gate_id']}/entry",
                          headers={"X-Gate-Key": gate["gate_key"]}, json={"event_id": "pass-in-1",
                                                                          "token": decoded[0].text}).json()
    assert entered["gate_open"] is True and entered["space_id"] == "R1"


def decoded_qr(locator) -> list[str]:
    """What a QR decoder (zxing-cpp) reads in the element as Chromium draws it: QR codes only (read
    for every format, the modules of a QR code were once also taken for a linear barcode's bars)."""
    import io

    import zxingcpp
    from PIL import Image

    return [code.text for code in zxingcpp.read_barcodes(Image.open(io.BytesIO(locator.screenshot())),
                                                         formats=zxingcpp.BarcodeFormat.QRCode)]


def test_a_driver_finds_a_lot_in_the_catalog_reserves_pays_and_the_shown_pass_opens_the_gate(site, customer_page,
                                                                                             shots):
    api, who = site["api"], customer()
    town = f"Town {uuid.uuid4().hex[:8]}"
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Riverside car park", "city": town, "timezone": "Europe/Moscow",
        "spaces": [{"space_id": "R1", "type": "REGULAR"}, {"space_id": "L1", "type": "LARGE"}],
        "tariff": {"hourly": {"value": "120.00", "currency": "RUB"}, "daily_cap": {"value": "900.00", "currency": "RUB"},
                   "grace_minutes": 10}}).json()
    publish(api, f"/lots/{lot['lot_id']}/publish")
    gate = api.request("POST", f"/lots/{lot['lot_id']}/gates", organizer=True, json={"name": "Main"}).json()

    page = customer_page(who, width=1280, height=900)
    page.goto("/index.html")
    page.get_by_label("City").fill(town)
    page.get_by_role("button", name="Search").click()
    page.locator("#lots").get_by_role("link", name=re.compile("Riverside car park")).click()
    expect(page).to_have_url(re.compile(r"/lot\.html\?lot_id="))
    expect(page.locator("#name")).to_have_text("Riverside car park")
    expect(page.locator("#about")).to_contain_text("RUB 120.00 an hour")
    expect(page.locator('#free li[data-type="REGULAR"]')).to_have_text("Regular: 1 free of 1")
    assert serious_accessibility_problems(page) == []
    shots(page, "lot-en-desktop", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    page.get_by_label("Language").select_option("ru")
    expect(page.get_by_role("heading", name="Забронировать место")).to_be_visible()
    assert serious_accessibility_problems(page) == []
    shots(page, "lot-ru-phone", full_page=True)
    page.get_by_label("Язык").select_option("en")
    expect(page.locator("html")).to_have_attribute("lang", "en")     # reloaded in English
    expect(page.locator("#name")).to_have_text("Riverside car park")  # and its script has run

    # tomorrow 10:10 to 11:40 on the reader's clock: to the minute, billed for 90 minutes
    day = page.evaluate("""() => { const d = new Date(Date.now() + 86400000);
        return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`; }""")
    page.get_by_label("From").fill(f"{day}T10:10")
    page.get_by_label("To").fill(f"{day}T11:40")
    page.get_by_label("Plate").fill("A123BC77")
    page.get_by_role("button", name="Hold a space").click()
    expect(page).to_have_url(re.compile(r"/booking\.html\?id="))
    expect(page.locator("#status")).to_have_attribute("data-status", "HELD")
    expect(page.locator("#places")).to_contain_text("Space R1 for A123BC77")
    expect(page.locator("#places")).to_contain_text(re.compile(r"10:10.*11:40"))   # the window, not 10:00-12:00
    expect(page.locator("#amount")).to_contain_text("240.00")                     # two started hours at 120
    # a lot offers no other space to a late payment: its hold text promises the money back only
    expect(page.locator("#after")).to_contain_text("otherwise your money is given back")
    expect(page.locator("#pass-card")).to_be_hidden()
    booking_url = page.url
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(re.compile(r"/checkout/"))
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(booking_url)
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(page.locator("#pass")).to_have_attribute("src", re.compile(r"^data:image/svg\+xml"))
    expect(page.get_by_role("link", name="Back to the parking")).to_have_attribute(
        "href", f"lot.html?lot_id={lot['lot_id']}")
    assert serious_accessibility_problems(page) == []
    shots(page, "booking-parking-pass", full_page=True)
    booking_id = page.url.split("id=")[1]
    token = api.booking(booking_id, who)["entry_token"]
    assert decoded_qr(page.locator("#pass")) == [token]      # the code on the page is the pass itself
    # the lot refunds a cancellation until the window starts: the page says so, in the API's words,
    # and the button names the exact amount a cancel now gives back (cancel_refund_amount, issue 45)
    back = api.booking(booking_id, who)["cancel_refund_amount"]
    assert back == api.booking(booking_id, who)["amount"]
    expect(page.locator("#cancel")).to_have_text(re.compile(rf"^Cancel and get RUB\s{re.escape(back['value'])} back$"))
    expect(page.locator("#cancel-terms")).to_contain_text("your payment is refunded in full; later, nothing")
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("#status")).to_have_text("Оплачено и подтверждено")
    expect(page.locator("#places")).to_contain_text("Место R1 для A123BC77")
    expect(page.get_by_role("heading", name="Пропуск")).to_be_visible()
    expect(page.locator("#pass")).to_have_attribute("src", re.compile(r"^data:image/svg\+xml"))
    assert serious_accessibility_problems(page) == []
    shots(page, "booking-parking-pass-ru", full_page=True)
    expect(page.locator("#cancel-terms")).to_contain_text("оплата возвращается полностью")
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "booking-parking-pass-ru-phone", full_page=True)
    # the pass is the window itself: a gate today, hours before tomorrow's 10:10 less early entry, keeps shut
    refused = api.request("POST", f"/lots/{lot['lot_id']}/gates/{gate['gate_id']}/entry",
                          headers={"X-Gate-Key": gate["gate_key"]},
                          json={"event_id": "page-pass-in-1", "token": token}).json()
    assert (refused["gate_open"], refused["reason"]) == (False, "outside_window")

    # the driver again, for today: a window to the minute a little ahead (the lot's early entry lets
    # the car in now), reserved and paid on the pages; the pass read off the page opens the gate
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_label("Язык").select_option("en")
    page.get_by_role("link", name="Back to the parking").click()
    expect(page.locator("#name")).to_have_text("Riverside car park")
    start, end = page.evaluate("""() => {
        const pad = (n) => String(n).padStart(2, "0");
        const local = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
        const start = new Date(Date.now() + 2 * 60000);
        if (start.getMinutes() % 30 === 0) start.setMinutes(start.getMinutes() + 1);    // off the half hour
        return [local(start), local(new Date(start.getTime() + 90 * 60000))];
    }""")
    page.get_by_label("From").fill(start)
    page.get_by_label("To").fill(end)
    page.get_by_label("Plate").fill("B222BB77")
    page.get_by_role("button", name="Hold a space").click()
    expect(page).to_have_url(re.compile(r"/booking\.html\?id="))
    expect(page.locator("#amount")).to_contain_text("240.00")
    today_url = page.url
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(re.compile(r"/checkout/"))
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(today_url)
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(page.locator("#pass")).to_have_attribute("src", re.compile(r"^data:image/svg\+xml"))
    [read] = decoded_qr(page.locator("#pass"))
    assert read == api.booking(today_url.split("id=")[1], who)["entry_token"]
    entered = api.request("POST", f"/lots/{lot['lot_id']}/gates/{gate['gate_id']}/entry",
                          headers={"X-Gate-Key": gate["gate_key"]},
                          json={"event_id": "page-pass-in-2", "token": read}).json()
    assert entered["gate_open"] is True and entered["space_id"] == "R1"


def test_a_drive_up_pays_its_exit_from_the_page_the_gate_links_to_and_sees_the_receipt(site, customer_page, shots):
    api = site["api"]
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Station car park", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "80.00", "currency": "RUB"}}}).json()
    gate = api.request("POST", f"/lots/{lot['lot_id']}/gates", organizer=True, json={"name": "Exit"}).json()

    def through(direction, event_id):
        answer = api.request("POST", f"/lots/{lot['lot_id']}/gates/{gate['gate_id']}/{direction}",
                             headers={"X-Gate-Key": gate["gate_key"]}, json={"event_id": event_id, "plate": "K 808 KK"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    assert through("entry", "walk-in-1")["gate_open"] is True
    owed = through("exit", "walk-out-1")
    assert owed["exit_granted"] is False and owed["amount_due"] == {"value": "80.00", "currency": "RUB"}

    page = customer_page("", width=1280, height=900)      # a driver with no account: the link is enough
    page.goto(owed["confirmation_url"])
    expect(page).to_have_url(re.compile(r"/exit\.html\?"))
    expect(page.locator("#status")).to_have_attribute("data-state", "pending")
    expect(page.locator("#lot")).to_have_text("Station car park")
    expect(page.locator("#plate")).to_have_text("K808KK")
    expect(page.locator("#amount")).to_contain_text("80.00")
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-en-desktop", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-en-phone", full_page=True)
    page.get_by_label("Language").select_option("ru")
    expect(page.get_by_role("heading", name="Оплата парковки")).to_be_visible()
    expect(page.locator("#status")).to_have_text("Оплатите перед выездом")
    expect(page.locator("#amount")).to_contain_text("80,00")
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-ru-phone", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    shots(page, "exit-ru-desktop", full_page=True)
    exit_url = page.url

    page.get_by_role("button", name="Оплатить").click()
    expect(page).to_have_url(re.compile(r"/checkout/"))         # the sandbox's payment page
    page.get_by_role("button", name="Pay").click()
    expect(page).to_have_url(exit_url)                            # back through return_url
    expect(page.locator("#status")).to_have_attribute("data-state", "paid")
    expect(page.locator("#status")).to_have_text("Оплачено: шлагбаум откроется")
    expect(page.locator("#pay")).to_be_hidden()
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-paid-ru-desktop", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-paid-ru-phone", full_page=True)
    assert through("exit", "walk-out-2")["exit_granted"] is True
    page.get_by_label("Язык").select_option("en")
    expect(page.locator("#status")).to_have_text("Paid: the barrier opens for you")
    expect(page.locator("#exited-row")).to_be_visible()           # the receipt says when the car left
    expect(page.locator("#explain")).to_have_text("You have left the car park. This is your receipt.")
    page.set_viewport_size({"width": 1280, "height": 900})
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-paid-en-desktop", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-paid-en-phone", full_page=True)


def test_a_lot_that_keeps_the_money_never_promises_a_refund_and_the_cancel_does_what_it_said(site, customer_page):
    api, sandbox, who = site["api"], site["control"], customer()
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Strict car park", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "100.00", "currency": "RUB"}}, "policy": {"cancel_refund": "none"}}).json()
    start = (system_clock() + timedelta(days=1)).replace(hour=10, minute=10, second=0, microsecond=0)
    held = api.request("POST", f"/lots/{lot['lot_id']}/reservations", customer=who, key=str(uuid.uuid4()), json={
        "vehicle_type": "REGULAR", "plate": "M111MM", "from": start.isoformat(),
        "to": (start + timedelta(minutes=90)).isoformat()}).json()
    payment = api.pay(held["booking_id"], who)
    sandbox.pay(payment.json()["payment_id"])
    api.wait_status(held["booking_id"], who, "CONFIRMED")

    page = customer_page(who)
    page.goto(f"/booking.html?id={held['booking_id']}")
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    expect(page.locator("#cancel")).to_have_text("Cancel the booking")
    expect(page.locator("#cancel-terms")).to_have_text(
        "Cancelling now gives nothing back: under this booking's terms the payment is kept.")
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.locator("#cancel").click()
    expect(page.locator("#status")).to_have_attribute("data-status", "CANCELLED_NO_REFUND")
    assert asked and "refunded" not in asked[0] and "gives nothing back" in asked[0], asked
    expect(page.locator("#status")).to_have_text("Cancelled, nothing given back")
    assert serious_accessibility_problems(page) == []
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("#status")).to_have_text("Отменено, деньги не возвращены")
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []


def console_page(page, name: str) -> None:
    """Open one of the operator console's pages by its navigation link (web/operator.js, PAGES)."""
    page.locator(f'nav.console a[href="#{name}"]').click()
    expect(page.locator(f"#page-{name}")).to_be_visible()


def operator_page(customer_page, width=1280, height=900, section: str | None = None):
    page = customer_page("operator-olga", width=width, height=height)
    page.goto("/operator.html")
    page.get_by_label("Organizer key").fill("local-organizer-key")
    page.get_by_label("Your name").fill("olga")
    page.get_by_role("button", name="Use").click()
    if section:
        console_page(page, section)
    return page


def test_an_operator_creates_a_lot_and_gates_revokes_one_and_resolves_a_gate_case(site, customer_page, shots):
    api = site["api"]
    page = operator_page(customer_page, section="lots")
    name = f"Depot {uuid.uuid4().hex[:6]}"
    form = page.locator("#create-lot")
    form.get_by_label("Name", exact=True).fill(name)
    form.get_by_label("Regular spaces").fill("3")
    form.get_by_label("Accessible spaces").fill("1")
    form.get_by_label("Price an hour").fill("120")
    form.get_by_role("button", name="Create lot").click()
    expect(page.locator("#lot-result")).to_have_text(f'Created "{name}" with 4 spaces and published it.')
    lot = page.locator("article[data-lot]", has_text=name)
    lot_id = lot.get_attribute("data-lot")
    expect(lot.locator("h3")).to_have_text(f"{name} (published)")
    assert api.request("GET", f"/lots/{lot_id}").json()["tariff"]["hourly"] == {"value": "120.00", "currency": "RUB"}
    expect(lot.locator('tr[data-type="REGULAR"] td')).to_have_text(["3", "3", "0", "0", "0"])   # live occupancy by type
    expect(lot.locator('tr[data-type="HANDICAP"] td').first).to_have_text("1")

    gate_keys = {}
    for gate_name in ("North", "South"):
        lot.get_by_label("Gate name").fill(gate_name)
        lot.get_by_role("button", name="Add gate").click()
        expect(lot.locator(".notice")).to_contain_text(f'The key of gate "{gate_name}", shown only now')
        gate_keys[gate_name] = lot.locator("code.gate-key").text_content()
    gates = {g["name"]: g for g in api.request("GET", f"/lots/{lot_id}/gates", organizer=True).json()["gates"]}
    assert set(gates) == {"North", "South"}
    config = f"/lots/{lot_id}/gates/{gates['North']['gate_id']}/config"
    assert api.request("GET", config, headers={"X-Gate-Key": gate_keys["North"]}).status_code == 200

    lot.get_by_role("button", name="Re-key: North").click()          # a new key, shown once; the old one stops
    expect(lot.locator(".notice")).to_contain_text('The key of gate "North", shown only now')
    expect(lot.locator("code.gate-key")).not_to_have_text(gate_keys["North"])
    new_key = lot.locator("code.gate-key").text_content()
    assert api.request("GET", config, headers={"X-Gate-Key": gate_keys["North"]}).status_code == 401
    assert api.request("GET", config, headers={"X-Gate-Key": new_key}).status_code == 200
    expect(lot.locator(f'tr[data-gate="{gates["North"]["gate_id"]}"]')).to_contain_text("key replaced")

    lot.get_by_role("button", name="Revoke: South").click()
    south = lot.locator(f'tr[data-gate="{gates["South"]["gate_id"]}"]')
    expect(south).to_have_attribute("data-state", "revoked")
    expect(south).to_contain_text("revoked")
    expect(south.get_by_role("button")).to_have_count(0)
    south_config = f"/lots/{lot_id}/gates/{gates['South']['gate_id']}/config"
    assert api.request("GET", south_config, headers={"X-Gate-Key": gate_keys["South"]}).status_code == 401

    # an offline exit the backend would have kept (three hours unpaid): a gate case for the operator
    now = system_clock().replace(microsecond=0)
    passes = [{"seq": 1, "event_id": "op-in", "kind": "entry", "at": (now - timedelta(hours=3)).isoformat(), "plate": "K001OP"},
              {"seq": 2, "event_id": "op-out", "kind": "exit", "at": now.isoformat(), "plate": "K001OP"}]
    synced = api.request("POST", f"/lots/{lot_id}/gates/{gates['North']['gate_id']}/sync",
                         headers={"X-Gate-Key": new_key}, json={"events": passes}).json()
    case_id = synced["results"][1]["conflict"]["case_id"]
    expect(lot.locator('tr[data-type="REGULAR"] td').last).to_have_text("0")   # the car has left again
    case = page.locator(f'article[data-case="{case_id}"]')
    expect(case).to_contain_text("A car left without paying what its ticket owed")
    expect(case).to_contain_text("K001OP")
    expect(case).to_contain_text(name)
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-parking-en-desktop", full_page=True)
    case.get_by_label("Resolution").select_option("paid_on_site")
    case.get_by_label("Note").fill("paid cash at the booth")
    case.get_by_role("button", name="Record resolution").click()
    expect(case.locator(".notice")).to_have_text("Resolved: Paid on site.")
    expect(case).to_have_attribute("data-status", "RESOLVED")
    case.locator("summary").click()
    expect(case.locator(".journal")).to_contain_text("paid cash at the booth")
    stored = [c for c in api.request("GET", "/admin/reviews", organizer=True).json()["gate_cases"] if c["case_id"] == case_id]
    assert stored == []                                                # no longer open

    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-parking-en-phone", full_page=True)
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("h1")).to_have_text("Оператор")
    lot = page.locator("article[data-lot]", has_text=name)
    expect(lot.get_by_role("heading", name="Шлагбаумы")).to_be_visible()
    expect(lot).to_contain_text("занято 0 мест")
    expect(page.get_by_role("heading", name="Случаи на шлагбаумах")).to_be_visible()
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-parking-ru-phone", full_page=True)
    console_page(page, "sales")
    expect(page.locator("#metrics tr").first).to_be_visible()       # every section has drawn its rows
    console_page(page, "lots")
    page.set_viewport_size({"width": 1280, "height": 900})
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-parking-ru-desktop", full_page=True)


def test_an_operator_creates_a_resource_and_a_service_and_sees_the_resources_day(site, customer_page, shots):
    api = site["api"]
    page = operator_page(customer_page, section="services")
    page.locator("#create-resource").get_by_label("Name", exact=True).fill("Studio B")
    page.locator("#create-resource").get_by_role("button", name="Create resource").click()
    expect(page.locator("#section-appointments .notice").first).to_have_text('Created the resource "Studio B".')
    form = page.locator("#create-service")
    form.get_by_label("Name", exact=True).fill("Evening stretch")
    form.get_by_label("Seats per session").fill("6")
    form.get_by_label("Studio B").check()
    form.get_by_role("button", name="Create service").click()
    expect(page.locator("#create-service + .notice")).to_contain_text('Created "Evening stretch" and published it.')
    service_id = page.locator("#create-service + .notice a").get_attribute("href").split("id=")[1]
    [slot] = [s for s in api.availability(service_id, f"{YEAR}-05-20") if s["starts_at"] == f"{YEAR}-05-20T15:00:00.000Z"]
    held = api.book_slot(service_id, customer(), {"starts_at": f"{YEAR}-05-20T18:00:00+03:00",
                                                  "resource_id": slot["resource_id"], "quantity": 2})
    assert held.status_code == 201, held.text

    # the organizer's every resource is listed (GET /resources), those of the other tests on this stack too
    page.locator("#day-form select[name=resource]").select_option(slot["resource_id"])
    page.get_by_label("Day", exact=True).fill(f"{YEAR}-05-20")
    page.get_by_role("button", name="Show").click()
    row = page.locator(f'#resource-day tr[data-start="{YEAR}-05-20T15:00:00.000Z"]')
    expect(row).to_contain_text(re.compile(r"06:00\sPM.07:00\sPM.*Group session: Evening stretch.*2 seats.*0 seats"))
    expect(page.locator("#section-appointments")).to_contain_text("Europe/Moscow")
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-appointments-en-desktop", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-appointments-en-phone", full_page=True)
    page.get_by_label("Language").select_option("ru")
    page.locator("#day-form select[name=resource]").select_option(slot["resource_id"])
    page.get_by_label("День", exact=True).fill(f"{YEAR}-05-20")
    page.get_by_role("button", name="Показать").click()
    expect(page.locator(f'#resource-day tr[data-start="{YEAR}-05-20T15:00:00.000Z"]')).to_contain_text(
        re.compile(r"Групповое занятие: Evening stretch.*2 места"))
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-appointments-ru-phone", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-appointments-ru-desktop", full_page=True)


def test_the_operator_page_shows_the_local_stacks_clock_and_moves_it(site, customer_page, shots):
    """Local only (GET/POST /dev/clock, docs/local-stack.md): the stack's time, idle or busy, and a
    move forward; it moves one second so that the other tests' pages keep their times."""
    page = operator_page(customer_page)
    card = page.locator("#section-clock")
    expect(card).to_be_visible(timeout=10_000)
    expect(page.locator("#clock-now")).to_contain_text("Stack time: ")
    page.get_by_label("Seconds to move forward").fill("1")
    page.get_by_role("button", name="Move the clock").click()
    expect(page.locator("#clock-result")).to_contain_text("Moved: the stack's time is now ")
    expect(page.locator("#clock-state")).to_have_text("Idle: nothing runs or waits to run.")
    assert serious_accessibility_problems(page) == []
    shots(page, "operator-clock-en-desktop")
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("#clock-now")).to_contain_text("Время стенда: ")
    expect(page.get_by_role("button", name="Перевести часы")).to_be_visible()
    assert serious_accessibility_problems(page) == []


def test_the_event_and_service_pages_in_both_languages_pass_axe_on_desktop_and_phone(site, customer_page, shots):
    api = site["api"]
    event = published(api, name="Chamber evening", city="Kazan", capacity=None, starts_at=f"{YEAR}-06-05T16:00:00Z",
                      seat_map={"rows": [{"name": row, "seats": 6} for row in "AB"]})
    hall = api.create_resource(name="Small studio")["resource_id"]
    service = api.create_service([hall], name="Pottery class", capacity=4)
    publish(api, f"/services/{service['service_id']}/publish")
    assert api.book_slot(service["service_id"], customer(), {"starts_at": f"{YEAR}-06-05T10:00:00+03:00",
                                                             "resource_id": hall, "quantity": 3}).status_code == 201
    pages = {"event": (f"/event.html?id={event['event_id']}", "#seatmap .seat"),
             "service": (f"/service.html?id={service['service_id']}&date={YEAR}-06-05", ".slot")}
    page = customer_page(customer(), width=1280, height=900)
    for name, (path, ready) in pages.items():
        page.goto(path)
        expect(page.locator("html")).to_have_attribute("lang", "en")
        expect(page.locator(ready).first).to_be_visible()
        if name == "event":
            expect(seat(page, "A-1")).to_have_attribute("aria-label", "Seat A-1, available")
            expect(page.locator("#meta")).to_contain_text("a place")
        else:
            expect(page.locator(f'.slot[data-start="{YEAR}-06-05T07:00:00.000Z"]')).to_contain_text("1 seat left")
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-en-desktop", full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-en-phone", full_page=True)

        page.get_by_label("Language").select_option("ru")       # reloads the page in Russian
        expect(page.locator("html")).to_have_attribute("lang", "ru")
        expect(page.locator(ready).first).to_be_visible()
        if name == "event":
            expect(seat(page, "A-1")).to_have_attribute("aria-label", "Место A-1, свободно")
            expect(page.locator("#meta")).to_contain_text("за место")
            expect(page.get_by_role("button", name="Забронировать", exact=True)).to_be_visible()
        else:
            expect(page.locator(f'.slot[data-start="{YEAR}-06-05T07:00:00.000Z"]')).to_contain_text("осталось 1 место")
            expect(page.locator(f'.slot[data-start="{YEAR}-06-05T08:00:00.000Z"]')).to_contain_text("осталось 4 места")
            expect(page.locator("#day-heading")).to_contain_text(f"июня {YEAR}")
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-ru-phone", full_page=True)
        page.set_viewport_size({"width": 1280, "height": 900})
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-ru-desktop", full_page=True)
        page.get_by_label("Язык").select_option("en")
        expect(page.locator("html")).to_have_attribute("lang", "en")


def test_the_booking_and_lot_pages_in_both_languages_pass_axe_on_desktop_and_phone(site, customer_page, shots):
    """The pages the catalog and operator tests do not walk in all four: a held booking and a lot."""
    api, who = site["api"], customer()
    event = published(api, name="Quiet recital", capacity=None, seat_map={"rows": [{"name": "A", "seats": 4}]})
    held = api.book(event["event_id"], who, {"seats": ["A-2", "A-3"]})
    assert held.status_code == 201, held.text
    lot = api.request("POST", "/lots", organizer=True, json={
        "name": "Harbour car park", "city": "Kazan", "timezone": "Europe/Moscow",
        "spaces": [{"space_id": "R1", "type": "REGULAR"}, {"space_id": "C1", "type": "COMPACT"}],
        "tariff": {"hourly": {"value": "90.00", "currency": "RUB"}, "grace_minutes": 15}}).json()
    pages = {"booking": (f"/booking.html?id={held.json()['booking_id']}", "#status", "Seats A-2, A-3",
                         "Места A-2, A-3"),
             "lot": (f"/lot.html?lot_id={lot['lot_id']}", "#free li", "Regular: 1 free of 1", "Обычная: свободно 1 из 1")}
    page = customer_page(who, width=1280, height=900)
    for name, (path, ready, english, russian) in pages.items():
        page.goto(path)
        expect(page.locator(ready).first).not_to_be_empty()
        expect(page.locator("main")).to_contain_text(english)
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-en-desktop", full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-en-phone", full_page=True)
        page.get_by_label("Language").select_option("ru")
        expect(page.locator("html")).to_have_attribute("lang", "ru")
        expect(page.locator("main")).to_contain_text(russian)
        if name == "booking":     # the last step and the history, in Russian too
            expect(page.locator("#explain")).to_have_text("Места забронированы")
            expect(page.locator("#journal li")).to_contain_text(["Места забронированы"])
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-ru-phone", full_page=True)
        page.set_viewport_size({"width": 1280, "height": 900})
        assert serious_accessibility_problems(page) == []
        shots(page, f"{name}-ru-desktop", full_page=True)
        page.get_by_label("Язык").select_option("en")
        expect(page.locator("html")).to_have_attribute("lang", "en")


def test_an_organizer_with_receipts_gets_the_address_asked_before_the_payment(site, customer_page, shots):
    """Issue 44: the organizer issues fiscal receipts; a booking made without an address is asked
    for one on its page before it pays, and the payment carries the receipt for that address."""
    from devstack.organizers import PLATFORM_KEY
    from tests.support.api import BookingApi

    api, who = site["api"], customer()
    made = api.request("POST", "/admin/organizers", headers={"X-Api-Key": PLATFORM_KEY}, json={"name": "Receipts"})
    org = BookingApi(api.base, organizer_key=made.json()["api_key"])
    assert org.request("PUT", "/organizers/me/fiscal", organizer=True,
                       json={"tax_system_code": 2, "vat_code": 1}).status_code == 200
    event = published(org, name="Receipted recital", capacity=4)
    booking = org.book(event["event_id"], who, {"quantity": 1}).json()
    page = customer_page(who)
    page.goto(f"/booking.html?id={booking['booking_id']}")
    expect(page.locator("#status")).to_have_attribute("data-status", "HELD")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.locator("#contact")).to_be_visible()
    expect(page.get_by_label("E-mail for the receipt")).to_be_focused()
    page.get_by_role("button", name="Pay with this address").click()            # empty: asked again
    expect(page.get_by_label("E-mail for the receipt")).to_have_attribute("aria-invalid", "true")
    assert serious_accessibility_problems(page) == []
    page.get_by_label("E-mail for the receipt").fill("reader@example.com")
    shots(page, "booking-receipt-address")
    page.get_by_role("button", name="Pay with this address").click()
    expect(page).to_have_url(re.compile(r"/checkout/"))
    page.get_by_role("button", name="Pay").click()
    expect(page.locator("#status")).to_have_attribute("data-status", "CONFIRMED")
    seen = org.booking(booking["booking_id"], who)
    assert seen["contact_email"] == "reader@example.com"
    assert [r["type"] for r in seen["receipts"]][:1] == ["payment"]
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("#contact-why")).to_contain_text("Кассовый чек")


def test_a_drive_ups_exit_page_asks_the_receipts_address_before_the_payment(site, customer_page, shots):
    """Issue 44: the lot's organizer issues fiscal receipts; the exit page asks the driver for the
    receipt's address, then goes on to the provider with the payment carrying that receipt."""
    from devstack.organizers import PLATFORM_KEY
    from tests.support.api import BookingApi

    api = site["api"]
    made = api.request("POST", "/admin/organizers", headers={"X-Api-Key": PLATFORM_KEY}, json={"name": "Fiscal lot"})
    org = BookingApi(api.base, organizer_key=made.json()["api_key"])
    assert org.request("PUT", "/organizers/me/fiscal", organizer=True,
                       json={"tax_system_code": 2, "vat_code": 1}).status_code == 200
    lot = org.request("POST", "/lots", organizer=True, json={
        "name": "Market car park", "spaces": [{"space_id": "R1", "type": "REGULAR"}],
        "tariff": {"hourly": {"value": "70.00", "currency": "RUB"}}}).json()
    gate = org.request("POST", f"/lots/{lot['lot_id']}/gates", organizer=True, json={"name": "Exit"}).json()

    def through(direction, event_id):
        answer = api.request("POST", f"/lots/{lot['lot_id']}/gates/{gate['gate_id']}/{direction}",
                             headers={"X-Gate-Key": gate["gate_key"]}, json={"event_id": event_id, "plate": "M 404 MM"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    assert through("entry", "fiscal-in")["gate_open"] is True
    owed = through("exit", "fiscal-out")
    page = customer_page("", width=1280, height=900)
    page.goto(owed["confirmation_url"])
    expect(page.locator("#status")).to_have_attribute("data-state", "pending")
    expect(page.locator("#contact")).to_be_visible()
    expect(page.locator("#pay")).to_be_hidden()                   # no payment until the address is given
    page.get_by_role("button", name="Pay with this address").click()            # empty: asked again
    expect(page.get_by_label("E-mail for the receipt")).to_have_attribute("aria-invalid", "true")
    assert serious_accessibility_problems(page) == []
    page.get_by_label("Language").select_option("ru")
    expect(page.locator("#contact-why")).to_contain_text("Кассовый чек")
    page.get_by_label("Почта для чека").fill("driver@example.com")
    assert serious_accessibility_problems(page) == []
    shots(page, "exit-receipt-address")
    page.get_by_role("button", name="Оплатить с этим адресом").click()
    expect(page).to_have_url(re.compile(r"/checkout/"))
