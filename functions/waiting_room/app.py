"""Waiting room of high-demand events: join the queue, poll for a position or an admission token."""
from holdfast import wiring
from holdfast.entry.http import customer_id, json_response, make_resolver
from holdfast.observability import log_metrics, logger, tracer

wiring.cold_start(wiring.ADMISSION_TOKEN_SECRET, loads=("admission",))  # every route uses it

app = make_resolver()


@app.post("/events/<event_id>/queue")
@tracer.capture_method
def join_queue(event_id: str):
    customer = customer_id(app)
    wiring.rate_limiter().take("queue", customer)
    return json_response(200, wiring.waiting_room().join(event_id, customer), {"Cache-Control": "no-store"})


@app.get("/events/<event_id>/queue")
@tracer.capture_method
def queue_status(event_id: str):
    customer = customer_id(app)
    wiring.rate_limiter().take("queue", customer)
    return json_response(200, wiring.waiting_room().status(event_id, customer), {"Cache-Control": "no-store"})


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
