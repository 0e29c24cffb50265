"""Doors API: organizers add and remove an event's doors and watch its check-ins; doors read their
configuration, scan tickets and report the scans they made offline."""
from holdfast import wiring
from holdfast.products.events import wiring as events_wiring
from holdfast.entry.http import header, json_response, make_resolver, parse_body, require_organizer
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.resolver import Response

wiring.cold_start(wiring.ORGANIZER_KEY_HASH_SECRET)

app = make_resolver(audit=wiring.record_action)


@app.post("/events/<event_id>/doors")
@tracer.capture_method
def create_door(event_id: str):
    from holdfast.products.events.schemas import DoorIn

    caller = require_organizer(app, wiring.authenticate_organizer)
    door = events_wiring.doors().create_door(event_id, parse_body(app, DoorIn).name, caller)
    return json_response(201, door)   # the key is in this answer only


@app.get("/events/<event_id>/doors/<door_id>/config")
@tracer.capture_method
def door_config(event_id: str, door_id: str):
    return json_response(200, events_wiring.doors().config(event_id, door_id, _door_key()))


@app.post("/events/<event_id>/doors/<door_id>/scan")
@tracer.capture_method
def scan(event_id: str, door_id: str):
    from holdfast.clock import system_clock
    from holdfast.products.events.schemas import ScanIn

    return json_response(200, events_wiring.scan_online(event_id, door_id, _door_key(),
                                                        lambda: parse_body(app, ScanIn).model_dump(),
                                                        at=system_clock()))


@app.post("/events/<event_id>/doors/<door_id>/sync")
@tracer.capture_method
def door_sync(event_id: str, door_id: str):
    from holdfast.products.events.schemas import DoorSyncIn

    door = events_wiring.doors().door(event_id, door_id, _door_key(), deleted_too=True)
    scans = [item.as_event() for item in parse_body(app, DoorSyncIn).events]
    # a revoked door still reports what it did offline: nobody it let in goes unaccounted for
    if door.get("deleted_at"):
        return json_response(200, events_wiring.revoked_door_sync(door, event_id, door_id, scans))
    return json_response(200, events_wiring.door_sync().sync(event_id, door_id, scans))


@app.delete("/events/<event_id>/doors/<door_id>")
@tracer.capture_method
def delete_door(event_id: str, door_id: str):
    # a repeat is 204 too: the door stays revoked
    events_wiring.doors().delete_door(event_id, door_id, require_organizer(app, wiring.authenticate_organizer))
    return Response(status_code=204, content_type=None, body="")


@app.get("/events/<event_id>/checkins")
@tracer.capture_method
def checkins(event_id: str):
    caller = require_organizer(app, wiring.authenticate_organizer)
    return json_response(200, events_wiring.doors().checkins(event_id, caller),
                         {"Cache-Control": "private, no-store"})


def _door_key() -> str | None:
    """A door's routes take its key (401 door_unauthorized without the right one)."""
    return header(app, "X-Door-Key")


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return app.resolve(event, context)
