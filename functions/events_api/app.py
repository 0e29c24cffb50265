"""Events API: organizers create events; anyone reads one with its live counts."""
from holdfast import wiring
from holdfast.http import header, json_response, make_resolver, parse_body, require_organizer
from holdfast.observability import log_metrics, logger, tracer
from holdfast.schemas import EventIn

wiring.cold_start(secret=True)

app = make_resolver()


@app.post("/events")
@tracer.capture_method
def create_event():
    require_organizer(app, wiring.organizer_api_key)
    request = parse_body(app, EventIn)
    key = header(app, "Idempotency-Key")
    return json_response(201, wiring.catalog().create_event(request, key))


@app.get("/events/<event_id>")
@tracer.capture_method
def get_event(event_id: str):
    return json_response(200, wiring.catalog().get_event(event_id))


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
