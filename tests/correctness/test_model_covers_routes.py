"""The correctness model keeps level with the routes (issue 42): every route of template.yaml and
every organizer or operator command (the admin CLI's subcommands, the command objects of the core
and the products) names the model operation that plays it (``model.OPERATIONS``, or the gate
world's ``gate_model.OPERATIONS``), or says in words why the model needs none. A new route or
command fails here until it has one or the other; an entry for a route that is gone fails too."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.correctness import gate_model, model
from tests.support.template import template

ROOT = Path(__file__).resolve().parents[2]
#: A reason, not an operation: written as "none: <why>".
READ_ONLY = "none: a read that changes nothing; what it shows is checked where the model reads it (R4, V2)"
ROUTES: dict[str, str] = {
    "GET /admin/bookings/{booking_id}": READ_ONLY,
    "POST /admin/bookings/{booking_id}/cancel": "operator_resolves",
    "POST /admin/checkin-cases/{case_id}/resolve": "none: a door case names a ticket; resolving it moves no booking, "
                                                   "place or money (tests/handlers/test_doors_api.py)",
    "POST /admin/gate-cases/{case_id}/resolve": "none: the gate world's cases are resolved by test_gate_model's checks "
                                                "(G-rules); the resolution moves no booking",
    "GET /admin/organizers": READ_ONLY,
    "POST /admin/organizers": "none: the platform creates an organizer once; the model's two organizers exist from the start",
    "POST /admin/organizers/{organizer_id}/resume": "none: suspension gates the organizer's own routes "
                                                    "(tests/unit/test_organizers.py); bookings are not touched",
    "POST /admin/organizers/{organizer_id}/suspend": "none: as resume",
    "GET /admin/reviews": READ_ONLY,
    "POST /admin/reviews/{booking_id}/resolve": "operator_resolves",
    "GET /admin/sales": READ_ONLY,
    "GET /admin/exports/{export_file}": READ_ONLY,
    "GET /bookings/{booking_id}": "customer_reads_booking",
    "POST /bookings/{booking_id}/cancel": "cancel",
    "GET /bookings/{booking_id}/pass.svg": READ_ONLY,
    "POST /bookings/{booking_id}/payment": "start_payment",
    "POST /bookings/{booking_id}/resolution": "customer_resolves",
    "GET /bookings/{booking_id}/tickets/{ticket_file}": READ_ONLY,
    "GET /contacts/confirm": READ_ONLY,
    "POST /contacts/confirm": "none: an address's standing for mail; no booking, place or money depends on it",
    "DELETE /customers/me": "customer_erases",
    "GET /customers/me/data": READ_ONLY,
    "GET /events": READ_ONLY,
    "POST /events": "organizer_retries_event",
    "GET /events/{event_id}": READ_ONLY,
    "PATCH /events/{event_id}": "organizer_moves_start",
    "POST /events/{event_id}/bookings": "create",
    "POST /events/{event_id}/cancel": "organizer_cancels_event",
    "GET /events/{event_id}/cancellation": READ_ONLY,
    "GET /events/{event_id}/checkins": READ_ONLY,
    "POST /events/{event_id}/doors": "none: a door is a device key; its scans are raced in "
                                     "tests/correctness/test_door_scan_race.py",
    "DELETE /events/{event_id}/doors/{door_id}": "none: as POST .../doors",
    "GET /events/{event_id}/doors/{door_id}/config": "refund_refused",
    "POST /events/{event_id}/doors/{door_id}/scan": "none: one check-in per ticket is raced in test_door_scan_race.py; "
                                                    "whether a ticket admits is V2's (refund_refused)",
    "POST /events/{event_id}/doors/{door_id}/sync": "none: the core's sequenced sync is the gate world's (sync_gate)",
    "POST /events/{event_id}/publish": "none: a catalog flag; the listing is not what the model's invariants read",
    "GET /events/{event_id}/queue": READ_ONLY,
    "POST /events/{event_id}/queue": "customer_queues",
    "GET /events/{event_id}/seats": READ_ONLY,
    "DELETE /events/{event_id}/waitlist": "none: leaving a line changes no booking; offers are waitlist_advance's",
    "GET /events/{event_id}/waitlist": READ_ONLY,
    "POST /events/{event_id}/waitlist": "waitlist_join",
    "GET /lots": READ_ONLY,
    "POST /lots": "none: the model's lot is created with its history (kind_cases.ParkingCase)",
    "GET /lots/{lot_id}": READ_ONLY,
    "GET /lots/{lot_id}/gates": READ_ONLY,
    "POST /lots/{lot_id}/gates": "none: the gate world creates its two gates with its history",
    "DELETE /lots/{lot_id}/gates/{gate_id}": "none: a retired device's passes are refused with a case "
                                             "(tests/handlers/test_doors_api.py, tests/unit/test_ownership.py)",
    "GET /lots/{lot_id}/gates/{gate_id}/config": "refresh_config",
    "POST /lots/{lot_id}/gates/{gate_id}/entry": "car_enters",
    "POST /lots/{lot_id}/gates/{gate_id}/exit": "car_exits",
    "POST /lots/{lot_id}/gates/{gate_id}/key": "none: a key rotation; the gate's passes carry on under either key",
    "POST /lots/{lot_id}/gates/{gate_id}/sync": "sync_gate",
    "POST /lots/{lot_id}/publish": "none: a catalog flag, as POST /events/{id}/publish",
    "POST /lots/{lot_id}/reservations": "parking_window_begun",
    "POST /lots/{lot_id}/subscriptions": "none: a subscription holds no granule; it lets a plate in (gate_passes tests)",
    "GET /lots/{lot_id}/tickets/{ticket_id}/exit-payment": "pays_exit",
    "GET /organizers/me": READ_ONLY,
    "GET /organizers/me/fiscal": READ_ONLY,
    "PUT /organizers/me/fiscal": "organizer_sets_fiscal",
    "DELETE /organizers/me/fiscal": "organizer_sets_fiscal",
    "POST /organizers/me/keys": "none: an organizer's API key; other_organizer_intrudes plays a key that owns nothing",
    "DELETE /organizers/me/keys/{key_id}": "none: as POST /organizers/me/keys",
    "POST /resources": "none: the model's service and its hall are created with its history (kind_cases.SlotsCase)",
    "GET /resources": READ_ONLY,
    "GET /resources/{resource_id}/day": READ_ONLY,
    "GET /services": READ_ONLY,
    "POST /services": "none: as POST /resources",
    "GET /services/{service_id}/availability": READ_ONLY,
    "POST /services/{service_id}/bookings": "time_paid_late",
    "POST /services/{service_id}/publish": "none: a catalog flag, as POST /events/{id}/publish",
    "GET /texts": READ_ONLY,
    "POST /webhooks/payments": "deliver",
    # orders (issue 43): an order is one booking of the order kind, so the booking operations play
    # its payment and cancel once place_order has made it
    "POST /orders": "place_order",
    "POST /admin/orders": "organizer_gives_order",
    "POST /events/{event_id}/blocks": "organizer_blocks",
    "DELETE /events/{event_id}/blocks/{block_id}": "organizer_unblocks",
    "GET /events/{event_id}/blocks": READ_ONLY,
    "GET /orders/{order_id}": READ_ONLY,
    "POST /orders/{order_id}/payment": "start_payment",
    "POST /orders/{order_id}/cancel": "cancel",
    "POST /events/{event_id}/parking": "none: links a lot to an event for the event page; the order it "
                                       "fills is place_order's, the link moves no place or money",
    # codes (issue 45): the model's code is made once with its history; its uses are claims
    "POST /events/{event_id}/codes": "none: the model's code is created with its history (BookingModel); "
                                     "hold_with_code and place_order use it, C1 counts its uses",
    "GET /events/{event_id}/codes": READ_ONLY,
    "DELETE /events/{event_id}/codes/{code}": "none: an ended code refuses new holds only (400 invalid_code, "
                                              "tests/integration/test_codes_flow.py); uses held stay counted (C1)",
    "POST /services/{service_id}/codes": "none: as POST /events/{event_id}/codes",
    "GET /services/{service_id}/codes": READ_ONLY,
    "DELETE /services/{service_id}/codes/{code}": "none: as DELETE /events/{event_id}/codes/{code}",
    "POST /lots/{lot_id}/codes": "none: as POST /events/{event_id}/codes (a reservation's use is the same claim)",
    "GET /lots/{lot_id}/codes": READ_ONLY,
    "DELETE /lots/{lot_id}/codes/{code}": "none: as DELETE /events/{event_id}/codes/{code}",
    # the team (issue 46)
    "GET /organizers/me/keys": READ_ONLY,
    "GET /organizers/me/audit": READ_ONLY,
    "POST /organizers/me/webhooks": "none: an endpoint listens to facts already committed; no booking, place or "
                                    "money waits for it (tests/unit/test_webhooks.py, "
                                    "tests/integration/test_webhooks.py)",
    "GET /organizers/me/webhooks": READ_ONLY,
    "DELETE /organizers/me/webhooks/{webhook_id}": "none: as POST /organizers/me/webhooks",
    "POST /organizers/me/webhooks/{webhook_id}/test": "none: as POST /organizers/me/webhooks",
    "GET /organizers/me/webhooks/{webhook_id}/deliveries": READ_ONLY,
    "POST /organizers/me/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": "none: as POST "
                                                                                    "/organizers/me/webhooks",
    # exchange (issue 45): a confirmed booking moved to other places in one write, or nothing changes
    "POST /bookings/{booking_id}/exchange": "exchange",
    # a drive-up's exit payment with its receipt's address (issue 44): the gate world's exit payment
    "POST /lots/{lot_id}/tickets/{ticket_id}/exit-payment": "pays_exit",
    # an export written to a file by a job (issue 46): it reads what the pages read and writes only its own job
    "POST /organizers/me/exports": "none: the job reads bookings as GET /admin/exports does and writes only its own "
                                   "job item and file; no booking, place or money changes "
                                   "(tests/integration/test_export_jobs.py)",
    "GET /organizers/me/exports/{export_id}": READ_ONLY,
    # transfers (issue 45): a confirmed booking given to another customer
    "POST /bookings/{booking_id}/transfer": "customer_offers_transfer",
    "DELETE /bookings/{booking_id}/transfer": "customer_withdraws_transfer",
    "GET /bookings/{booking_id}/transfer/accept": READ_ONLY,
    "POST /bookings/{booking_id}/transfer/accept": "customer_accepts_transfer",
    # the organizer's export jobs, newest first (issue 46)
    "GET /organizers/me/exports": READ_ONLY,
    # one offering's sales with their receipts, for the operator's sales page (issue 44)
    "GET /admin/sales/{offering_id}": READ_ONLY,
}
#: The admin CLI's subcommands (layers/holdfast/holdfast/tools/cli.py) and the command objects.
COMMANDS: dict[str, str] = {
    "cli reviews": READ_ONLY,
    "cli show": READ_ONLY,
    "cli resolve": "operator_resolves",
    "cli cancellation": READ_ONLY,
    "cli notifications": READ_ONLY,
    "cli metrics": READ_ONLY,
    "cli backfill-event-index": "none: a one-off migration of events created before the event index; the model's "
                                "events all have it",
    "cli reindex-search": "none: rebuilds the catalog's search items, which no invariant reads",
    "cli adopt-unowned": "none: a one-off migration giving pre-organizer events an owner",
    "cli rekey-open-cases": "none: a one-off migration of the open cases' index keys; no booking, place or money moves",
    "cli backfill-owner-index": "none: a one-off migration writing owned resources' organizer index entries; no "
                                "booking, place or money moves",
    "HoldPlaces": "create",
    "Price": "none: a part of CreateEvent",
    "SeatLayout": "none: a part of CreateEvent",
    "CreateEvent": "organizer_retries_event",
    "CreateResource": "none: as POST /resources",
    "CreateService": "none: as POST /services",
    "CreateLot": "none: as POST /lots",
    "CreateSubscription": "none: as POST /lots/{lot_id}/subscriptions",
}


def _routes() -> set[str]:
    found = set()
    for resource in template()["Resources"].values():
        if resource.get("Type") == "AWS::Serverless::Function":
            for event in (resource.get("Properties", {}).get("Events") or {}).values():
                if event.get("Type") == "Api":
                    found.add(f"{event['Properties']['Method'].upper()} {event['Properties']['Path']}")
    return found


def _commands() -> set[str]:
    cli = (ROOT / "layers/holdfast/holdfast/tools/cli.py").read_text()
    found = {f"cli {name}" for name in re.findall(r'commands\.add_parser\(\s*"([a-z-]+)"', cli)}
    modules = [ROOT / "layers/holdfast/holdfast/domain/commands.py",
               *sorted((ROOT / "layers/holdfast/holdfast/products").glob("*/commands.py"))]
    for module in modules:
        tree = ast.parse(module.read_text())
        found |= {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    return found


def _check(table: dict[str, str], present: set[str]) -> None:
    operations = set(model.OPERATIONS) | set(gate_model.OPERATIONS)
    missing = sorted(present - set(table))
    assert not missing, f"no model operation nor reason for {missing}: add an operation to tests/correctness/model.py " \
                        "(or gate_model.py) and name it here, or write why none is needed"
    gone = sorted(set(table) - present)
    assert not gone, f"entries for what no longer exists: {gone}"
    unknown = {name: how for name, how in table.items() if not how.startswith("none: ") and how not in operations}
    assert not unknown, f"named operations the model does not have: {unknown}"


def test_every_route_of_the_template_has_a_model_operation_or_a_reason():
    _check(ROUTES, _routes())


def test_every_organizer_and_operator_command_has_a_model_operation_or_a_reason():
    _check(COMMANDS, _commands())


def test_the_check_fails_for_a_route_without_an_entry():
    try:
        _check(ROUTES, _routes() | {"POST /events/{event_id}/transfer"})
    except AssertionError as exc:
        assert "POST /events/{event_id}/transfer" in str(exc)
    else:
        raise AssertionError("a new route without an operation passed")
