"""Bookings API: hold places, pay for them, read and cancel a booking, decide its conflict case;
confirm an address for notifications (the link a confirmation message carries)."""
from dataclasses import replace

from holdfast import wiring
from holdfast.products.appointments import wiring as appointments_wiring
from holdfast.entry.resolver import Response
from holdfast.entry.http import (customer_id, header, idempotency_key, json_response, make_resolver, parse_body,
                           preferred_language, verified_email, viewer_address)
from holdfast.observability import log_metrics, logger, tracer
from holdfast.domain.commands import HoldPlaces
from holdfast.domain.errors import InvalidRequest, NotFound
from holdfast.services.booking_views import describe

wiring.cold_start(wiring.PROVIDER_SECRET, wiring.ADMISSION_TOKEN_SECRET, wiring.PSEUDONYM_SECRET,
                  primed=("holdfast.schemas:BookingIn",),  # built before a SnapStart snapshot
                  loads=("admission",))  # every change is rate limited

app = make_resolver()
# A route that validates a body imports its request model: the others never load pydantic.


def language() -> str:
    """The language of the customer's texts in a booking's view (Accept-Language)."""
    return preferred_language(app.current_event.headers)


def _own_address(customer: str, command: HoldPlaces) -> HoldPlaces:
    """Mail goes to the customer's verified address unless they give another (services/mail_policy.py);
    the hold counts toward its network address's cap on live holds (domain/holder_address.py)."""
    from holdfast.services.mail_policy import addressed

    command = replace(command, holder_address=viewer_address(app),
                      captcha_token=header(app, "X-Captcha-Token"))
    return addressed(command, verified_email(app), wiring.mail_gate, customer)


@app.post("/events/<event_id>/bookings")
@tracer.capture_method
def create_booking(event_id: str):
    from holdfast.schemas import BookingIn

    # No per-request write of a rate limiter here: the per-customer cap on holds and the per-address
    # cap on live holds are conditions in the hold's own transaction, and floods meet API Gateway's
    # throttling, the web ACLs and the waiting room.
    customer, key = customer_id(app), idempotency_key(app)
    wiring.waiting_room().check_admission(event_id, customer, header(app, "X-Admission-Token"))
    request = replace(HoldPlaces.of(parse_body(app, BookingIn)), language=language())
    result = wiring.bookings().create_booking(event_id, customer, key, _own_address(customer, request))
    return json_response(201, describe(result.booking, language()),
                         {"Idempotent-Replayed": str(result.replayed).lower()})


@app.post("/services/<service_id>/bookings")
@tracer.capture_method
def book_service(service_id: str):
    from holdfast.products.appointments.schemas import SlotBookingIn

    customer, key = customer_id(app), idempotency_key(app)   # a hold: no limiter write (above)
    request = replace(HoldPlaces.of(parse_body(app, SlotBookingIn)), language=language())
    result = appointments_wiring.appointments().book(service_id, customer, key, _own_address(customer, request))
    return json_response(201, describe(result.booking, language()),
                         {"Idempotent-Replayed": str(result.replayed).lower()})


@app.post("/orders")
@tracer.capture_method
def place_order():
    from holdfast.products.orders import wiring as orders_wiring
    from holdfast.products.orders.schemas import OrderIn, order_lines
    from holdfast.products.orders.services import PlaceOrder

    customer, key = customer_id(app), idempotency_key(app)   # a hold: no limiter write (above)
    body = parse_body(app, OrderIn)
    addressed = _own_address(customer, HoldPlaces(contact_email=body.contact_email))
    order = PlaceOrder(order_lines(body.lines), contact_email=addressed.contact_email,
                       contact_own=addressed.contact_own, language=language(),
                       holder_address=addressed.holder_address, captcha_token=addressed.captcha_token)
    service = orders_wiring.orders()
    result = service.place(customer, key, order)
    return json_response(201, service.describe(result.booking, language()),
                         {"Idempotent-Replayed": str(result.replayed).lower()})


@app.get("/orders/<order_id>")
@tracer.capture_method
def get_order(order_id: str):
    from holdfast.products.orders import wiring as orders_wiring

    return json_response(200, orders_wiring.orders().view(order_id, customer_id(app), language()))


@app.post("/orders/<order_id>/payment")
@tracer.capture_method
def pay_order(order_id: str):
    from holdfast.products.orders import wiring as orders_wiring

    customer, key = customer_id(app), idempotency_key(app)
    wiring.rate_limiter().take("booking", customer)
    orders_wiring.orders().owned(order_id, customer)
    return _payment_started(wiring.payments().start_payment(order_id, customer, key, contact_email=_payment_contact()),
                            "order_id")


@app.post("/orders/<order_id>/cancel")
@tracer.capture_method
def cancel_order(order_id: str):
    from holdfast.products.orders import wiring as orders_wiring

    customer = customer_id(app)
    wiring.rate_limiter().take("booking", customer)
    service = orders_wiring.orders()
    service.owned(order_id, customer)
    return json_response(200, service.describe(_cancelled(order_id, customer), language()))


@app.get("/bookings/<booking_id>")
@tracer.capture_method
def get_booking(booking_id: str):
    return json_response(200, wiring.bookings().view(booking_id, customer_id(app), language()))


@app.get("/bookings/<booking_id>/pass.svg")
@tracer.capture_method
def booking_pass(booking_id: str):
    # text, not a binary media type: API Gateway hands an SVG through as the function wrote it.
    # The pass admits its holder: no shared cache may keep it, and a cancelled booking has none.
    svg = wiring.passes().svg(booking_id, customer_id(app))
    return Response(status_code=200, content_type="image/svg+xml", body=svg,
                    headers={"Cache-Control": "private, no-store"})


@app.get("/bookings/<booking_id>/tickets/<ticket_file>")
@tracer.capture_method
def ticket_code(booking_id: str, ticket_file: str):
    # API Gateway takes a parameter as a whole path segment: "<ticket_id>.svg" arrives as one
    ticket_id = ticket_file.removesuffix(".svg")
    if ticket_id == ticket_file:
        raise NotFound("Tickets are drawn as <ticket_id>.svg.", code="no_pass")
    svg = wiring.passes().svg(booking_id, customer_id(app), pass_id=ticket_id)
    return Response(status_code=200, content_type="image/svg+xml", body=svg,
                    headers={"Cache-Control": "private, no-store"})


@app.post("/bookings/<booking_id>/payment")
@tracer.capture_method
def start_payment(booking_id: str):
    customer, key = customer_id(app), idempotency_key(app)
    wiring.rate_limiter().take("booking", customer)
    booking = wiring.payments().start_payment(booking_id, customer, key, contact_email=_payment_contact())
    return _payment_started(booking, "booking_id")


def _payment_contact():
    """The address a payment's body may name (only a page that was asked for one sends a body)."""
    if not (app.current_event.body or "").strip():
        return None
    from holdfast.schemas import PaymentIn

    return parse_body(app, PaymentIn).contact_email


def _payment_started(booking, id_field: str):
    """The answer of a payment route: the booking's (or order's) one provider payment."""
    payment = booking.payment
    return json_response(201, {
        id_field: booking.booking_id, "status": booking.status.value, "payment_id": payment.payment_id,
        "confirmation_url": payment.confirmation_url, "amount": booking.amount.as_dict(),
    })


def _cancelled(booking_id: str, customer: str):
    """The customer gives a booking (or an order) up: refunded when confirmed, an open payment voided."""
    return wiring.bookings().cancel(booking_id, customer)


@app.post("/bookings/<booking_id>/cancel")
@tracer.capture_method
def cancel_booking(booking_id: str):
    customer = customer_id(app)
    wiring.rate_limiter().take("booking", customer)
    return json_response(200, describe(_cancelled(booking_id, customer), language()))


def _exchange_model(body: dict):
    """An exchange takes its target's hold body: a slot's (``starts_at``) or an event's."""
    from holdfast.products.appointments.schemas import SlotExchangeIn
    from holdfast.schemas import ExchangeIn

    return SlotExchangeIn if "starts_at" in body else ExchangeIn


@app.post("/bookings/<booking_id>/exchange")
@tracer.capture_method
def exchange_booking(booking_id: str):
    customer, key = customer_id(app), idempotency_key(app)
    wiring.rate_limiter().take("booking", customer)
    body = parse_body(app, None, pick=_exchange_model)
    target = getattr(body, "event_id", None) or getattr(body, "service_id", None)
    request = HoldPlaces.of(body.model_dump(exclude={"event_id", "service_id", "contact_email"}))
    booking = wiring.exchanges().exchange(booking_id, customer, key, target, request)
    # into dearer places the view carries exchange_difference: the new places held until it is paid
    return json_response(200, wiring.bookings().view(booking.booking_id, customer, language()))


@app.post("/bookings/<booking_id>/resolution")
@tracer.capture_method
def resolve_conflict(booking_id: str):
    from holdfast.schemas import ResolutionIn

    customer, key = customer_id(app), idempotency_key(app)
    wiring.rate_limiter().take("booking", customer)
    request = parse_body(app, ResolutionIn)
    return json_response(200, wiring.resolutions().choose(booking_id, customer, key, request.choice, request.fields))


# A confirmed booking given to another customer (issue 45, services/transfers.py). The link's token
# is the authority: whoever holds it and is signed in may accept; its GET changes nothing (mail
# scanners and link previews open links), and a browser is sent on to the page that asks first.
@app.post("/bookings/<booking_id>/transfer")
@tracer.capture_method
def offer_transfer(booking_id: str):
    from holdfast.schemas import TransferIn

    customer = customer_id(app)
    wiring.rate_limiter().take("booking", customer)
    to_email = parse_body(app, TransferIn).to_email
    return json_response(202, wiring.transfers().offer(booking_id, customer, to_email, verified_email(app)))


@app.delete("/bookings/<booking_id>/transfer")
@tracer.capture_method
def withdraw_transfer(booking_id: str):
    customer = customer_id(app)
    wiring.rate_limiter().take("booking", customer)
    return json_response(200, {"withdrawn": wiring.transfers().withdraw(booking_id, customer)})


def _transfer_token() -> str:
    return app.current_event.get_query_string_value("token") or ""


@app.get("/bookings/<booking_id>/transfer/accept")
@tracer.capture_method
def show_transfer(booking_id: str):
    service, token = wiring.transfers(), _transfer_token()
    page = service.page(booking_id, token) if "text/html" in (header(app, "Accept") or "") else None
    if page is not None:
        return Response(303, None, "", {"Location": page, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
    shown = service.show(booking_id, token) | {"accept_with": f"POST /bookings/{booking_id}/transfer/accept?token=..."}
    return json_response(200, shown, {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})


@app.post("/bookings/<booking_id>/transfer/accept")
@tracer.capture_method
def accept_transfer(booking_id: str):
    customer = customer_id(app)
    wiring.rate_limiter().take("booking", customer)
    booking = wiring.transfers().accept(booking_id, _transfer_token(), customer, verified_email(app))
    return json_response(200, wiring.bookings().view(booking.booking_id, customer, language()))


@app.get("/customers/me/data")
@tracer.capture_method
def my_data():
    return json_response(200, wiring.personal_data().export(customer_id(app)))


@app.delete("/customers/me")
@tracer.capture_method
def forget_me():
    # a repeat finds nothing left that names the customer, and answers the same
    customer = customer_id(app)
    wiring.rate_limiter().take("booking", customer)
    wiring.personal_data().forget(customer)
    return Response(status_code=204, content_type=None, body="")


# The link of a confirmation message (services/mail_policy.py). Its GET only shows a button: mail
# scanners and link previews open links, and must not confirm an address nobody chose.
_CONFIRM_PAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                                                    "form-action 'self'; frame-ancestors 'none'",
                         "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def _confirm_page(status: int, title: str, text: str, token: str | None = None) -> Response:
    from html import escape

    form = (f'<form method="post" action="?token={escape(token)}"><button type="submit">Confirm this address'
            '</button></form>') if token else ""
    page = (f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title></head>'
            f'<body><h1>{escape(title)}</h1><p>{escape(text)}</p>{form}</body></html>')
    return Response(status, "text/html; charset=utf-8", page, dict(_CONFIRM_PAGE_HEADERS))


@app.get("/contacts/confirm")
@tracer.capture_method
def show_confirmation():
    token = app.current_event.get_query_string_value("token") or ""
    if "text/html" not in (header(app, "Accept") or ""):
        return json_response(200, {"confirmed": False, "confirm_with": "POST /contacts/confirm?token=..."})
    return _confirm_page(200, "Confirm your address",
                         "Booking notifications will be sent to this address once you confirm it.", token)


@app.post("/contacts/confirm")
@tracer.capture_method
def confirm_contact():
    from holdfast.services.mail_policy import InvalidConfirmation

    token = app.current_event.get_query_string_value("token") or ""
    wants_page = "text/html" in (header(app, "Accept") or "")
    try:
        wiring.mail_gate().confirm(token)
    except InvalidConfirmation as exc:
        if wants_page:
            return _confirm_page(400, "This link does not work", str(exc))
        raise InvalidRequest(str(exc), code="confirmation_invalid") from None
    if wants_page:
        return _confirm_page(200, "Address confirmed", "Booking notifications will now reach this address.")
    return json_response(200, {"confirmed": True})


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
