"""Catalog API: the public listing and search and the live seat map. Reads answer with
Cache-Control and an ETag; If-None-Match gives 304. It only reads: its role cannot write the table
and reads no secret (the organizer's edit and publish are in events_api)."""
from holdfast import wiring
from holdfast.http import cached_json, make_resolver
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import listing as _listing  # noqa: F401 - every route uses it: loaded at init

wiring.cold_start()

app = make_resolver()
# A route that validates its input imports its request model: the others never load pydantic.

LISTING_MAX_AGE = 30
SEAT_MAP_MAX_AGE = 1


@app.get("/events")
@tracer.capture_method
def list_events():
    params = app.current_event.query_string_parameters or {}
    from holdfast.schemas import EventListQuery

    query = EventListQuery.model_validate(params).search()
    return cached_json(app, wiring.listing().list_events(query), LISTING_MAX_AGE)


@app.get("/events/<event_id>/seats")
@tracer.capture_method
def seat_map(event_id: str):
    return cached_json(app, wiring.listing().seat_map(event_id), SEAT_MAP_MAX_AGE)


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
