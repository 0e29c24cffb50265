"""Operator endpoints: bookings in manual review, and the decision taken on each."""
from holdfast import wiring
from holdfast.http import json_response, make_resolver, parse_body, require_organizer
from holdfast.observability import log_metrics, logger, tracer
from holdfast.services import reviews as _reviews  # noqa: F401 - every route uses it: loaded at init

wiring.cold_start(secret=True)

app = make_resolver()


@app.get("/admin/reviews")
@tracer.capture_method
def list_reviews():
    require_organizer(app, wiring.organizer_api_key)
    service = wiring.reviews()
    return json_response(200, {"reviews": service.open_reviews(), "gate_cases": service.store.list_gate_cases()})


@app.post("/admin/reviews/<booking_id>/resolve")
@tracer.capture_method
def resolve_review(booking_id: str):
    require_organizer(app, wiring.organizer_api_key)
    from holdfast.schemas import ResolveIn   # only this route validates a body: the others never load pydantic

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
