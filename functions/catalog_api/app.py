"""Catalog API: the public listing and search, the live seat map and the customer texts every
page shows (domain/texts.py, the API's own sentences). Reads answer with
Cache-Control for browsers and the CDN (holdfast/entry/http.py) and an ETag; If-None-Match gives 304. It only reads: its role cannot write the table
and reads no secret (the organizer's edit and publish are in events_api)."""
from holdfast import wiring
from holdfast.entry.http import LISTING_FRESHNESS, SEAT_MAP_FRESHNESS, TEXTS_FRESHNESS, cached_json, make_resolver
from holdfast.observability import log_metrics, logger, tracer

wiring.cold_start(primed=("holdfast.schemas:EventListQuery",),  # built before a SnapStart snapshot
                  loads=("listing",))  # every route uses it

app = make_resolver()
# A route that validates its input imports its request model: the others never load pydantic.


@app.get("/events")
@tracer.capture_method
def list_events():
    params = app.current_event.query_string_parameters or {}
    from holdfast.schemas import EventListQuery

    query = EventListQuery.model_validate(params).search()
    return cached_json(app, wiring.listing().list_events(query), LISTING_FRESHNESS)


@app.get("/events/<event_id>/seats")
@tracer.capture_method
def seat_map(event_id: str):
    return cached_json(app, wiring.listing().seat_map(event_id), SEAT_MAP_FRESHNESS)


@app.get("/texts")
@tracer.capture_method
def customer_texts():
    from holdfast.domain.errors import InvalidRequest
    from holdfast.domain.texts import DEFAULT_LANGUAGE, LANGUAGES
    from holdfast.kinds import products

    every = products.customer_texts()   # the core's and every product's own

    params = app.current_event.query_string_parameters or {}
    if set(params) - {"lang"} or params.get("lang", DEFAULT_LANGUAGE) not in LANGUAGES:
        raise InvalidRequest(f"Ask for one of the languages {', '.join(LANGUAGES)} with ?lang=, or for all without it.",
                             code="unknown_language", languages=list(LANGUAGES))
    texts = {params["lang"]: every[params["lang"]]} if "lang" in params else every
    return cached_json(app, {"default": DEFAULT_LANGUAGE, "languages": list(LANGUAGES), "texts": texts},
                       TEXTS_FRESHNESS)


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
