"""Operator endpoints: bookings in manual review, parking gate cases and event check-in cases, and the decision taken on
each; the platform's organizers; an organizer's own keys, webhooks and fiscal settings."""
from holdfast import wiring
from holdfast.products.events import wiring as events_wiring
from holdfast.products.parking import wiring as parking_wiring
from holdfast.entry.http import (idempotency_key, json_response, make_resolver, parse_body, require_organizer,
                           require_platform)
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.resolver import Response

wiring.cold_start(wiring.PROVIDER_SECRET, wiring.PLATFORM_KEY_SECRET, wiring.ORGANIZER_KEY_HASH_SECRET,
                  wiring.WEBHOOK_KEY_SECRET, loads=("reviews",))  # every route uses it

app = make_resolver(audit=wiring.record_action)


@app.get("/admin/reviews")
@tracer.capture_method
def list_reviews():
    caller = require_organizer(app, wiring.authenticate_organizer)
    query = app.current_event.query_string_parameters or {}
    limit = query.get("limit", wiring.reviews().page_size)
    page = wiring.reviews().review_page(limit, query.get("cursor") or None, caller)
    # each organizer's open cases are its own index partition, a page at a time
    gates = parking_wiring.gate_cases().open_page(caller, limit, query.get("gate_cases_cursor") or None)
    doors = events_wiring.checkin_cases().open_page(caller, limit, query.get("checkin_cases_cursor") or None)
    return json_response(200, {**page, "gate_cases": gates["cases"], "gate_cases_next_cursor": gates["next_cursor"],
                               "checkin_cases": doors["cases"], "checkin_cases_next_cursor": doors["next_cursor"]})


@app.get("/admin/sales")
@tracer.capture_method
def list_sales():
    caller = require_organizer(app, wiring.authenticate_organizer)
    query = app.current_event.query_string_parameters or {}
    return json_response(200, wiring.catalog().sales(caller, query.get("limit"), query.get("cursor") or None))


@app.get("/admin/sales/<offering_id>")
@tracer.capture_method
def offering_sales(offering_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    query = app.current_event.query_string_parameters or {}
    return json_response(200, wiring.exports().sales_of(caller, offering_id, query.get("cursor") or None,
                                                        query.get("limit")))


@app.get("/admin/exports/<export_file>")
@tracer.capture_method
def export_page(export_file: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    query = app.current_event.query_string_parameters or {}
    export = export_file.removesuffix(".csv") if export_file.endswith(".csv") else ""
    page = wiring.exports().page(caller, export, query.get("offering") or None, query.get("from") or None,
                                 query.get("to") or None, query.get("cursor") or None, query.get("limit"))
    headers = {"Content-Disposition": f'attachment; filename="{export}.csv"', "Cache-Control": "private, no-store",
               "X-Export-Rows": str(page["rows"])}
    if page["next_cursor"]:
        headers["X-Next-Cursor"] = page["next_cursor"]
    return Response(status_code=200, content_type="text/csv; charset=utf-8", body=page["text"], headers=headers)


@app.post("/organizers/me/exports")
@tracer.capture_method
def start_export_job():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import ExportJobIn

    key = idempotency_key(app)
    request = parse_body(app, ExportJobIn)
    job, replayed = wiring.export_jobs().start(caller, key, request.export, request.offering, request.since,
                                               request.until)
    return json_response(202, job, {"Idempotent-Replayed": str(replayed).lower(),
                                    "Location": f"/organizers/me/exports/{job['export_id']}"})


@app.get("/organizers/me/exports")
@tracer.capture_method
def list_export_jobs():
    caller = require_organizer(app, wiring.authenticate_organizer)
    query = app.current_event.query_string_parameters or {}
    # each ready job's download link is made for this answer and expires: never cached
    return json_response(200, wiring.export_jobs().page(caller, query.get("limit"), query.get("cursor") or None),
                         {"Cache-Control": "no-store"})


@app.get("/organizers/me/exports/<export_id>")
@tracer.capture_method
def get_export_job(export_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    # the download link is made for this answer and expires: never cached
    return json_response(200, wiring.export_jobs().view(caller, export_id), {"Cache-Control": "no-store"})


@app.post("/admin/gate-cases/<case_id>/resolve")
@tracer.capture_method
def resolve_gate_case(case_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.products.parking.schemas import GateCaseResolveIn   # only the resolving routes validate a body

    request = parse_body(app, GateCaseResolveIn)
    return json_response(200, parking_wiring.gate_cases().resolve(case_id, request.resolution, request.operator, request.note,
                                                           caller))


@app.post("/admin/checkin-cases/<case_id>/resolve")
@tracer.capture_method
def resolve_checkin_case(case_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.products.events.schemas import CheckinCaseResolveIn

    request = parse_body(app, CheckinCaseResolveIn)
    return json_response(200, events_wiring.checkin_cases().resolve(case_id, request.resolution, request.operator,
                                                                    request.note, caller))


@app.post("/admin/reviews/<booking_id>/resolve")
@tracer.capture_method
def resolve_review(booking_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import ResolveIn   # only the resolving routes validate a body: the others never load pydantic

    request = parse_body(app, ResolveIn)
    return json_response(200, wiring.reviews().resolve(booking_id, request.action, request.operator, request.note,
                                                       choice=request.choice, caller=caller))


@app.post("/admin/bookings/<booking_id>/cancel")
@tracer.capture_method
def cancel_booking(booking_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import OrganizerCancelIn

    request = parse_body(app, OrganizerCancelIn)
    return json_response(200, wiring.reviews().cancel(booking_id, request.operator, request.note, caller))


@app.post("/admin/orders")
@tracer.capture_method
def give_order():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.products.orders import wiring as orders_wiring
    from holdfast.products.orders.schemas import GivenOrderIn, order_lines

    key = idempotency_key(app)
    body = parse_body(app, GivenOrderIn)
    service = orders_wiring.orders()
    result = service.give(caller, key, order_lines(body.lines, blocks=True), body.note, body.for_email)
    return json_response(201, service.describe(result.booking), {"Idempotent-Replayed": str(result.replayed).lower()})


@app.get("/admin/bookings/<booking_id>")
@tracer.capture_method
def get_booking_journal(booking_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.reviews().booking_with_journal(booking_id, caller))


# ------------------------------------------------------------------ the platform's organizers

@app.post("/admin/organizers")
@tracer.capture_method
def create_organizer():
    require_platform(app, wiring.platform_api_key)
    from holdfast.schemas import OrganizerIn

    return json_response(201, wiring.organizers().create(parse_body(app, OrganizerIn).name))


@app.get("/admin/organizers")
@tracer.capture_method
def list_organizers():
    require_platform(app, wiring.platform_api_key)
    return json_response(200, {"organizers": wiring.organizers().list()})


@app.post("/admin/organizers/<organizer_id>/suspend")
@tracer.capture_method
def suspend_organizer(organizer_id: str):
    require_platform(app, wiring.platform_api_key)
    return json_response(200, wiring.organizers().suspend(organizer_id))


@app.post("/admin/organizers/<organizer_id>/resume")
@tracer.capture_method
def resume_organizer(organizer_id: str):
    require_platform(app, wiring.platform_api_key)
    return json_response(200, wiring.organizers().resume(organizer_id))


# ------------------------------------------------------------------------ an organizer's keys

@app.get("/organizers/me")
@tracer.capture_method
def organizer_me():
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.organizers().me(caller))


@app.get("/organizers/me/keys")
@tracer.capture_method
def list_organizer_keys():
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, {"keys": wiring.organizers().list_keys(caller)})


@app.post("/organizers/me/keys")
@tracer.capture_method
def add_organizer_key():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import OrganizerKeyIn

    # no body at all is a key with the calling key's own rights, as before keys had scopes
    request = parse_body(app, OrganizerKeyIn) if (app.current_event.body or "").strip() else OrganizerKeyIn()
    return json_response(201, wiring.organizers().add_key(caller, request.name, request.scopes, request.offerings))


@app.get("/organizers/me/audit")
@tracer.capture_method
def organizer_audit():
    caller = require_organizer(app, wiring.authenticate_organizer)
    query = app.current_event.query_string_parameters or {}
    return json_response(200, wiring.audit().page(caller, query.get("limit"), query.get("cursor") or None),
                         {"Cache-Control": "private, no-store"})


@app.delete("/organizers/me/keys/<key_id>")
@tracer.capture_method
def delete_organizer_key(key_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    wiring.organizers().delete_key(caller, key_id)
    return Response(status_code=204, content_type=None, body="")


# ------------------------------------------------------------------ an organizer's webhooks

@app.post("/organizers/me/webhooks")
@tracer.capture_method
def add_webhook():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import WebhookIn

    request = parse_body(app, WebhookIn)
    # the signing secret is in this answer only: never cached, never logged
    return json_response(201, wiring.webhooks().create(caller, request.url, request.events, request.description),
                         {"Cache-Control": "no-store"})


@app.get("/organizers/me/webhooks")
@tracer.capture_method
def list_webhooks():
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, {"webhooks": wiring.webhooks().list(caller)})


@app.delete("/organizers/me/webhooks/<webhook_id>")
@tracer.capture_method
def delete_webhook(webhook_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    wiring.webhooks().delete(caller, webhook_id)
    return Response(status_code=204, content_type=None, body="")


@app.post("/organizers/me/webhooks/<webhook_id>/test")
@tracer.capture_method
def test_webhook(webhook_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(202, wiring.webhooks().test(caller, webhook_id))


@app.get("/organizers/me/webhooks/<webhook_id>/deliveries")
@tracer.capture_method
def list_webhook_deliveries(webhook_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    query = app.current_event.query_string_parameters or {}
    return json_response(200, wiring.webhooks().deliveries(caller, webhook_id, query.get("limit"),
                                                           query.get("cursor") or None),
                         {"Cache-Control": "private, no-store"})


@app.post("/organizers/me/webhooks/<webhook_id>/deliveries/<delivery_id>/redeliver")
@tracer.capture_method
def redeliver_webhook(webhook_id: str, delivery_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(202, wiring.webhooks().redeliver(caller, webhook_id, delivery_id))


# -------------------------------------------------------------- an organizer's fiscal settings

@app.put("/organizers/me/fiscal")
@tracer.capture_method
def put_fiscal_settings():
    caller = require_organizer(app, wiring.authenticate_organizer)
    from holdfast.schemas import FiscalSettingsIn

    return json_response(200, wiring.fiscal_settings().put(caller, parse_body(app, FiscalSettingsIn).settings()))


@app.get("/organizers/me/fiscal")
@tracer.capture_method
def get_fiscal_settings():
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, wiring.fiscal_settings().get(caller))


@app.delete("/organizers/me/fiscal")
@tracer.capture_method
def delete_fiscal_settings():
    caller = require_organizer(app, wiring.authenticate_organizer)
    wiring.fiscal_settings().delete(caller)
    return Response(status_code=204, content_type=None, body="")


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
