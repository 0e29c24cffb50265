"""Waitlist API: join a sold-out event's waitlist, see one's place in it, leave it."""
from holdfast import wiring
from holdfast.entry.http import customer_id, header, json_response, make_resolver, parse_body, preferred_language, verified_email
from holdfast.observability import log_metrics, logger, tracer

# The secret holds the admission token key: a join of a high-demand event checks a token.
wiring.cold_start(wiring.ADMISSION_TOKEN_SECRET, primed=("holdfast.schemas:WaitlistIn",),  # built before a SnapStart snapshot
                  loads=("waitlist",))  # every route uses it

app = make_resolver()
# A route that validates a body imports its request model: the others never load pydantic.


@app.post("/events/<event_id>/waitlist")
@tracer.capture_method
def join_waitlist(event_id: str):
    from holdfast.schemas import WaitlistIn

    customer = customer_id(app)
    # An offer is a hold: while a high-demand event's queue is open only an admitted customer may
    # queue for one, exactly as only an admitted customer may hold (403 admission_required).
    wiring.waiting_room().check_waitlist_admission(event_id, customer, header(app, "X-Admission-Token"))
    from holdfast.services.mail_policy import contact_for

    body = parse_body(app, WaitlistIn)
    # the offer's mail goes to the customer's verified address unless they give another
    contact = contact_for(wiring.mail_gate, customer, body.contact_email, verified_email(app))
    entry, created = wiring.waitlist().join(event_id, customer, body.quantity, contact,
                                            preferred_language(app.current_event.headers), zone=body.zone,
                                            price_category=body.price_category)
    if created:
        # Places released between the join's check and its write found no entry to offer them
        # to: look again now. The relay does the same on every release, so a failure here only
        # delays the offer.
        try:
            wiring.waitlist().advance(event_id)
            entry = wiring.waitlist().status(event_id, customer)
        except Exception:  # noqa: BLE001
            logger.exception("waitlist advance after join failed", extra={"event_id": event_id})
    return json_response(200, {**entry, "joined_now": created})


@app.get("/events/<event_id>/waitlist")
@tracer.capture_method
def get_waitlist_entry(event_id: str):
    return json_response(200, wiring.waitlist().status(event_id, customer_id(app)))


@app.delete("/events/<event_id>/waitlist")
@tracer.capture_method
def leave_waitlist(event_id: str):
    return json_response(200, wiring.waitlist().leave(event_id, customer_id(app)))


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
