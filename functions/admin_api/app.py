"""Operator endpoints: bookings in manual review and parking gate cases, and the decision taken on each."""
from holdfast import wiring
from holdfast.products.parking import wiring as parking_wiring
from holdfast.http import json_response, make_resolver, parse_body, require_organizer
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import reviews as _reviews  # noqa: F401 - every route uses it: loaded at init

wiring.cold_start(secret=True)

app = make_resolver()


@app.get("/admin/reviews")
@tracer.capture_method
def list_reviews():
    require_organizer(app, wiring.organizer_api_key)
    query = app.current_event.query_string_parameters or {}
    page = wiring.reviews().review_page(query.get("limit", _reviews.PAGE_SIZE), query.get("cursor") or None)
    return json_response(200, {**page, "gate_cases": parking_wiring.gate_cases().open_cases()})


@app.post("/admin/gate-cases/<case_id>/resolve")
@tracer.capture_method
def resolve_gate_case(case_id: str):
    require_organizer(app, wiring.organizer_api_key)
    from holdfast.products.parking.schemas import GateCaseResolveIn   # only the resolving routes validate a body

    request = parse_body(app, GateCaseResolveIn)
    return json_response(200, parking_wiring.gate_cases().resolve(case_id, request.resolution, request.operator, request.note))


@app.post("/admin/reviews/<booking_id>/resolve")
@tracer.capture_method
def resolve_review(booking_id: str):
    require_organizer(app, wiring.organizer_api_key)
    from holdfast.schemas import ResolveIn   # only the resolving routes validate a body: the others never load pydantic

    request = parse_body(app, ResolveIn)
    return json_response(200, wiring.reviews().resolve(booking_id, request.action, request.operator, request.note,
                                                              choice=request.choice))


@app.get("/admin/bookings/<booking_id>")
@tracer.capture_method
def get_booking_journal(booking_id: str):
    require_organizer(app, wiring.organizer_api_key)
    return json_response(200, wiring.reviews().booking_with_journal(booking_id))


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
