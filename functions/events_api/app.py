"""Events API: organizers create events (edit, publish and cancel them), resources and appointment
services (and publish them); anyone reads an event with its live counts, the published services,
or a service's free times on a day."""
from holdfast import wiring
from holdfast.products.appointments import wiring as appointments_wiring
from holdfast.entry.http import (EVENT_FRESHNESS, LISTING_FRESHNESS, cached_json, header, idempotency_key, json_response,
                           make_resolver, parse_body, require_organizer)
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.resolver import Response
from holdfast.services.event_cancellation import validate_reason

wiring.cold_start(wiring.ORGANIZER_KEY_HASH_SECRET, loads=("catalog",))  # the event routes use it

app = make_resolver(audit=wiring.record_action)
# A route that validates a body imports its request model: the others never load pydantic.


@app.post("/events")
@tracer.capture_method
def create_event():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.products.events.schemas import EventIn

    request = parse_body(app, EventIn).command()
    key = header(app, "Idempotency-Key")
    return json_response(201, wiring.catalog().create_event(request, key, caller))


@app.get("/events/<event_id>")
@tracer.capture_method
def get_event(event_id: str):
    return cached_json(app, wiring.catalog().get_event(event_id), EVENT_FRESHNESS)


# Edit and publish write the catalog's index items: here with the other organizer writes, so the
# public catalog's function stays read-only.
@app.patch("/events/<event_id>")
@tracer.capture_method
def update_event(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import EventPatchIn

    return json_response(200, wiring.listing().update(event_id, parse_body(app, EventPatchIn).changes(), caller))


@app.post("/events/<event_id>/parking")
@tracer.capture_method
def link_parking(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.products.parking.schemas import EventParkingIn

    body = parse_body(app, EventParkingIn)
    return json_response(200, wiring.listing().link_companion(event_id, body.lot_id, body.before_minutes,
                                                             body.after_minutes, caller, missing="lot_not_found"))


# An event's or a service's codes: one offering id either way (services/codes.py).
@app.post("/events/<event_id>/codes")
@tracer.capture_method
def create_code(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import CodeIn

    return json_response(201, wiring.codes().create(event_id, parse_body(app, CodeIn).model_dump(), caller))


@app.get("/events/<event_id>/codes")
@tracer.capture_method
def list_codes(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.codes().list(event_id, caller))


@app.delete("/events/<event_id>/codes/<code>")
@tracer.capture_method
def end_code(event_id: str, code: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.codes().end(event_id, code, caller))


# The organizer's blocks of an event's places kept out of sale (services/blocks.py).
@app.post("/events/<event_id>/blocks")
@tracer.capture_method
def create_block(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import BlockIn

    request = parse_body(app, BlockIn)
    return json_response(201, wiring.blocks().create(event_id, request.command(), request.label, caller))


@app.get("/events/<event_id>/blocks")
@tracer.capture_method
def list_blocks(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.blocks().list(event_id, caller))


@app.delete("/events/<event_id>/blocks/<block_id>")
@tracer.capture_method
def end_block(event_id: str, block_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    wiring.blocks().end(event_id, block_id, caller)
    return Response(status_code=204, content_type=None, body="")


@app.post("/services/<service_id>/codes")
@tracer.capture_method
def create_service_code(service_id: str):
    return create_code(service_id)


@app.get("/services/<service_id>/codes")
@tracer.capture_method
def list_service_codes(service_id: str):
    return list_codes(service_id)


@app.delete("/services/<service_id>/codes/<code>")
@tracer.capture_method
def end_service_code(service_id: str, code: str):
    return end_code(service_id, code)


# A lot's codes: a reservation (or an order's parking line) takes "code" as a hold does.
@app.post("/lots/<lot_id>/codes")
@tracer.capture_method
def create_lot_code(lot_id: str):
    return create_code(lot_id)


@app.get("/lots/<lot_id>/codes")
@tracer.capture_method
def list_lot_codes(lot_id: str):
    return list_codes(lot_id)


@app.delete("/lots/<lot_id>/codes/<code>")
@tracer.capture_method
def end_lot_code(lot_id: str, code: str):
    return end_code(lot_id, code)


@app.post("/events/<event_id>/publish")
@tracer.capture_method
def publish_event(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.listing().publish(event_id, caller))


@app.post("/resources")
@tracer.capture_method
def create_resource():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.products.appointments.schemas import ResourceIn

    request = parse_body(app, ResourceIn).command()
    return json_response(201, appointments_wiring.appointments().create_resource(request, header(app, "Idempotency-Key"), caller))


@app.get("/resources")
@tracer.capture_method
def list_resources():
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, appointments_wiring.appointments().resources(caller))


@app.get("/resources/<resource_id>/day")
@tracer.capture_method
def resource_day(resource_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, appointments_wiring.appointments().resource_day(
        resource_id, app.current_event.get_query_string_value("date"), caller))


@app.post("/services")
@tracer.capture_method
def create_service():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.products.appointments.schemas import ServiceIn

    request = parse_body(app, ServiceIn).command()
    return json_response(201, appointments_wiring.appointments().create_service(request, header(app, "Idempotency-Key"), caller))


@app.post("/services/<service_id>/publish")
@tracer.capture_method
def publish_service(service_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, appointments_wiring.appointments().publish_service(service_id, caller))


@app.get("/services")
@tracer.capture_method
def list_services():
    from holdfast.products.appointments.schemas import ServiceListQuery

    query = ServiceListQuery.model_validate(app.current_event.query_string_parameters or {})
    listing = appointments_wiring.appointments().list_services(query.city, query.q, query.limit, query.cursor)
    return cached_json(app, listing, LISTING_FRESHNESS)


@app.get("/services/<service_id>/availability")
@tracer.capture_method
def service_availability(service_id: str):
    return json_response(200, appointments_wiring.appointments().availability(service_id, app.current_event.get_query_string_value("date")))


@app.post("/events/<event_id>/cancel")
@tracer.capture_method
def cancel_event(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import EventCancelIn

    key = idempotency_key(app)
    reason = validate_reason(parse_body(app, EventCancelIn).reason)
    progress, replayed = wiring.event_cancellation().cancel(event_id, key, reason, caller)
    return json_response(202, progress, {"Idempotent-Replayed": "true"} if replayed else None)


@app.get("/events/<event_id>/cancellation")
@tracer.capture_method
def get_cancellation(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.event_cancellation().progress(event_id, caller))


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
