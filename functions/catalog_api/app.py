"""Catalog API: the public listing and search, the live seat map, and the organizer's edit and
publish. Reads answer with Cache-Control and an ETag; If-None-Match gives 304."""
import hashlib
import json

from holdfast import wiring
from holdfast.http import Response, header, json_response, make_resolver, parse_body, require_organizer
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import listing as _listing  # noqa: F401 - every route uses it: loaded at init

wiring.cold_start(secret=True)

app = make_resolver()
# A route that validates its input imports its request model: the others never load pydantic.

LISTING_MAX_AGE = 30
SEAT_MAP_MAX_AGE = 1


def cached_json(body, max_age: int) -> Response:
    """200 with the body, or 304 when the client already has this exact body."""
    text = json.dumps(body, separators=(",", ":"), sort_keys=True, default=str)
    etag = '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": f"public, max-age={max_age}"}
    given = header(app, "If-None-Match") or ""
    if etag in [part.strip().removeprefix("W/") for part in given.split(",")] or given.strip() == "*":
        return Response(status_code=304, content_type=None, body="", headers=headers)
    return Response(status_code=200, content_type="application/json", body=text, headers=headers)


@app.get("/events")
@tracer.capture_method
def list_events():
    params = app.current_event.query_string_parameters or {}
    from holdfast.schemas import EventListQuery

    query = EventListQuery.model_validate(params).search()
    return cached_json(wiring.listing().list_events(query), LISTING_MAX_AGE)


@app.get("/events/<event_id>/seats")
@tracer.capture_method
def seat_map(event_id: str):
    return cached_json(wiring.listing().seat_map(event_id), SEAT_MAP_MAX_AGE)


@app.patch("/events/<event_id>")
@tracer.capture_method
def update_event(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import EventPatchIn

    return json_response(200, wiring.listing().update(event_id, parse_body(app, EventPatchIn).changes(), caller))


@app.post("/events/<event_id>/publish")
@tracer.capture_method
def publish_event(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.listing().publish(event_id, caller))


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
