"""Parking API: organizers create (and publish) lots, gates and subscriptions; anyone lists the
published lots; customers reserve a space (then pay, read and cancel through /bookings); gates
read their configuration, pass cars in and out, and report the passes they made offline."""
from dataclasses import replace

from holdfast import wiring
from holdfast.products.parking import wiring as parking_wiring
from holdfast.entry.http import (LISTING_FRESHNESS, cached_json, customer_id, header, idempotency_key, json_response,
                           make_resolver, parse_body, preferred_language, require_organizer, verified_email,
                           viewer_address)
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.resolver import Response
from holdfast.services.booking_views import describe

wiring.cold_start(wiring.PROVIDER_SECRET, wiring.ORGANIZER_KEY_HASH_SECRET,
                  primed=("holdfast.products.parking.schemas:ReservationIn",))  # built before a SnapStart snapshot

app = make_resolver(audit=wiring.record_action)
# Each route imports the request model it validates and the service it alone uses (a reservation
# never loads the gates' pass and sync code, nor the token signing it does not do).


@app.post("/lots")
@tracer.capture_method
def create_lot():
    from holdfast.products.parking.schemas import LotIn

    caller = require_organizer(app, wiring.authenticate_organizer)
    request = parse_body(app, LotIn).command()
    return json_response(201, parking_wiring.parking().create_lot(request, header(app, "Idempotency-Key"), caller))


@app.get("/lots")
@tracer.capture_method
def list_lots():
    from holdfast.products.parking.schemas import LotListQuery

    query = LotListQuery.model_validate(app.current_event.query_string_parameters or {})
    return cached_json(app, parking_wiring.parking().list_lots(query.city, query.limit, query.cursor),
                       LISTING_FRESHNESS)


@app.post("/lots/<lot_id>/publish")
@tracer.capture_method
def publish_lot(lot_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, parking_wiring.parking().publish_lot(lot_id, caller))


@app.get("/lots/<lot_id>")
@tracer.capture_method
def get_lot(lot_id: str):
    return json_response(200, parking_wiring.parking().get_lot(lot_id))


@app.post("/lots/<lot_id>/reservations")
@tracer.capture_method
def reserve(lot_id: str):
    from holdfast.products.parking.schemas import ReservationIn

    customer, key = customer_id(app), idempotency_key(app)
    # No limiter write here, like every hold route: API Gateway's throttling and the per-customer
    # hold cap inside the hold transaction are the flood control (docs/performance.md).
    from holdfast.services.mail_policy import addressed

    request = replace(parse_body(app, ReservationIn).command(), language=preferred_language(app.current_event.headers))
    # the reservation's messages go to the customer's verified address unless they give another
    request = addressed(request, verified_email(app), wiring.mail_gate, customer)
    # and counts toward its network address's cap on live holds (domain/holder_address.py)
    request = replace(request, holder_address=viewer_address(app),
                      captcha_token=header(app, "X-Captcha-Token"))
    result = parking_wiring.parking().reserve(lot_id, customer, key, request)
    view = (describe(result.booking, preferred_language(app.current_event.headers))
            | wiring.booking_view_extras(result.booking))
    return json_response(201, view, {"Idempotent-Replayed": str(result.replayed).lower()})


@app.post("/lots/<lot_id>/gates")
@tracer.capture_method
def create_gate(lot_id: str):
    from holdfast.products.parking.schemas import GateIn

    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(201, parking_wiring.parking().create_gate(lot_id, parse_body(app, GateIn).name, caller))


@app.get("/lots/<lot_id>/gates")
@tracer.capture_method
def list_gates(lot_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, parking_wiring.parking().list_gates(lot_id, caller))


@app.post("/lots/<lot_id>/gates/<gate_id>/key")
@tracer.capture_method
def rotate_gate_key(lot_id: str, gate_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, parking_wiring.parking().rotate_gate_key(lot_id, gate_id, caller))


@app.delete("/lots/<lot_id>/gates/<gate_id>")
@tracer.capture_method
def delete_gate(lot_id: str, gate_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    parking_wiring.parking().delete_gate(lot_id, gate_id, caller)
    return Response(status_code=204, content_type=None, body="")


@app.get("/lots/<lot_id>/gates/<gate_id>/config")
@tracer.capture_method
def gate_config(lot_id: str, gate_id: str):
    return json_response(200, parking_wiring.parking().gate_config(lot_id, gate_id, header(app, "X-Gate-Key")))


@app.post("/lots/<lot_id>/gates/<gate_id>/entry")
@tracer.capture_method
def gate_entry(lot_id: str, gate_id: str):
    return _pass(lot_id, gate_id, "entry")


@app.post("/lots/<lot_id>/gates/<gate_id>/exit")
@tracer.capture_method
def gate_exit(lot_id: str, gate_id: str):
    return _pass(lot_id, gate_id, "exit")


@app.post("/lots/<lot_id>/gates/<gate_id>/sync")
@tracer.capture_method
def gate_sync(lot_id: str, gate_id: str):
    from holdfast.products.parking.gate_sync_schemas import GateSyncIn

    gate = parking_wiring.parking().gate(lot_id, gate_id, header(app, "X-Gate-Key"), deleted_too=True)
    passes = [item.as_event() for item in parse_body(app, GateSyncIn).events]
    return json_response(200, parking_wiring.gate_sync().sync_gate(gate, lot_id, gate_id, passes))


@app.get("/lots/<lot_id>/tickets/<ticket_id>/exit-payment")
@tracer.capture_method
def exit_payment(lot_id: str, ticket_id: str):
    """The exit payment page's read: whoever holds the link the gate showed (its ``key``)."""
    key = (app.current_event.query_string_parameters or {}).get("key") or ""
    lot = parking_wiring.parking().lot(lot_id)
    answer = parking_wiring.gate_passes().exit_payments.page(lot, ticket_id, key[:200])
    return json_response(200, answer, {"Cache-Control": "private, no-store"})


@app.post("/lots/<lot_id>/tickets/<ticket_id>/exit-payment")
@tracer.capture_method
def pay_exit(lot_id: str, ticket_id: str):
    """The exit page's Pay: creates the link's payment once its receipt has the driver's address
    (``{"contact_email"}``, needed when the lot's organizer has receipts on); answers the page's view."""
    key = (app.current_event.query_string_parameters or {}).get("key") or ""
    contact = None
    if (app.current_event.body or "").strip():
        from holdfast.schemas import PaymentIn

        contact = parse_body(app, PaymentIn).contact_email
    lot = parking_wiring.parking().lot(lot_id)
    answer = parking_wiring.gate_passes().exit_payments.pay(lot, ticket_id, key[:200], contact)
    return json_response(200, answer, {"Cache-Control": "private, no-store"})


@app.post("/lots/<lot_id>/subscriptions")
@tracer.capture_method
def create_subscription(lot_id: str):
    from holdfast.products.parking.schemas import SubscriptionIn

    caller = require_organizer(app, wiring.authenticate_organizer)
    request = parse_body(app, SubscriptionIn).command()
    return json_response(201, parking_wiring.parking().create_subscription(lot_id, request, caller))


def _pass(lot_id: str, gate_id: str, kind: str):
    from holdfast.clock import system_clock
    from holdfast.products.parking.schemas import GatePassIn

    parking_wiring.parking().gate(lot_id, gate_id, header(app, "X-Gate-Key"))
    body = parse_body(app, GatePassIn)
    event = {"kind": kind, **body.model_dump(exclude_none=True)}
    return json_response(200, parking_wiring.apply_gate_pass(lot_id, gate_id, event, at=system_clock(), offline=False))


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
