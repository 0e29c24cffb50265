"""What each organizer key may do: the scopes, and the table of which scope each organizer route
needs.

A key carries a set of scopes (a key made before scopes existed, or made holding every scope,
carries no list and so every scope, those added later too) and may be limited to some offerings.
Every organizer route needs exactly one scope, named by its method and its path as template.yaml
spells it. The core's routes are named here; a product names its own routes, and any scope of its
own, in its ``Product`` (kinds/products.py joins them into the one table, ``route_scopes()``), so
the core spells no product. The request router reads that table when a handler asks who the
organizer is (``holdfast.entry.http.require_organizer``): no handler checks a scope itself. docs/api.md
lists the table route by route; tests/contract/test_route_scopes.py holds the two, and
template.yaml's organizer routes, to it.
"""
from __future__ import annotations

from typing import Mapping

EVENTS_WRITE = "events:write"
SALES_READ = "sales:read"
REFUNDS = "refunds"
REVIEWS = "reviews"
DOORS = "doors"
CODES = "codes"
KEYS = "keys"
WEBHOOKS = "webhooks"
EXPORTS = "exports"

#: The core's scopes, in the order the docs and the console show them (a product's own follow).
CORE_SCOPES: tuple[str, ...] = (EVENTS_WRITE, SALES_READ, REFUNDS, REVIEWS, DOORS, CODES, KEYS, WEBHOOKS, EXPORTS)

#: ``GET /organizers/me`` says who the key is and what it may do, so any live key may read it:
#: the one organizer route that needs no scope (it lists the organizer's other keys only to a key
#: holding ``keys``).
ANY_KEY = "any key"

Route = tuple[str, str]

#: The core's organizer routes: (method, path as in template.yaml) -> the scope it needs.
CORE_ROUTE_SCOPES: dict[Route, str] = {
    # offerings: what is sold, and its changes
    ("POST", "/events"): EVENTS_WRITE,
    ("PATCH", "/events/{event_id}"): EVENTS_WRITE,
    ("POST", "/events/{event_id}/publish"): EVENTS_WRITE,
    # the organizer's fiscal settings (receipts): what is sold is taxed so; the accountant reads them
    ("PUT", "/organizers/me/fiscal"): EVENTS_WRITE,
    ("DELETE", "/organizers/me/fiscal"): EVENTS_WRITE,
    ("GET", "/organizers/me/fiscal"): SALES_READ,
    # what was sold
    ("GET", "/admin/sales"): SALES_READ,
    ("GET", "/admin/bookings/{booking_id}"): SALES_READ,
    # what was sold, as CSV files for a spreadsheet or the accounts (check-ins and refunds too)
    ("GET", "/admin/exports/{export_file}"): EXPORTS,
    # money going back: cancelling an event or a booking refunds it
    ("POST", "/events/{event_id}/cancel"): REFUNDS,
    ("GET", "/events/{event_id}/cancellation"): REFUNDS,
    ("POST", "/admin/bookings/{booking_id}/cancel"): REFUNDS,
    # bookings in manual review
    ("GET", "/admin/reviews"): REVIEWS,
    ("POST", "/admin/reviews/{booking_id}/resolve"): REVIEWS,
    # check-in cases, whichever product's doors opened them
    ("POST", "/admin/checkin-cases/{case_id}/resolve"): DOORS,
    # discount and access codes of an offering (an event's or a service's)
    ("POST", "/events/{event_id}/codes"): CODES,
    ("GET", "/events/{event_id}/codes"): CODES,
    ("DELETE", "/events/{event_id}/codes/{code}"): CODES,
    # places kept out of sale (blocks): like a code, a say over who may have which places
    ("POST", "/events/{event_id}/blocks"): CODES,
    ("GET", "/events/{event_id}/blocks"): CODES,
    ("DELETE", "/events/{event_id}/blocks/{block_id}"): CODES,
    ("POST", "/services/{service_id}/codes"): CODES,
    ("GET", "/services/{service_id}/codes"): CODES,
    ("DELETE", "/services/{service_id}/codes/{code}"): CODES,
    # the team: keys, and the record of what each did
    ("GET", "/organizers/me"): ANY_KEY,
    ("GET", "/organizers/me/keys"): KEYS,
    ("POST", "/organizers/me/keys"): KEYS,
    ("DELETE", "/organizers/me/keys/{key_id}"): KEYS,
    ("GET", "/organizers/me/audit"): KEYS,
    # the organizer's own systems hearing about its sales (docs/api.md, "Webhooks")
    ("POST", "/organizers/me/webhooks"): WEBHOOKS,
    ("GET", "/organizers/me/webhooks"): WEBHOOKS,
    ("DELETE", "/organizers/me/webhooks/{webhook_id}"): WEBHOOKS,
    ("POST", "/organizers/me/webhooks/{webhook_id}/test"): WEBHOOKS,
    ("GET", "/organizers/me/webhooks/{webhook_id}/deliveries"): WEBHOOKS,
    ("POST", "/organizers/me/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver"): WEBHOOKS,
    # an export written to a file by a job, and its status with a download link (docs/api.md)
    ("POST", "/organizers/me/exports"): EXPORTS,
    ("GET", "/organizers/me/exports/{export_id}"): EXPORTS,
    ("GET", "/organizers/me/exports"): EXPORTS,
    # one offering's sales with their fiscal receipts (the operator's sales page)
    ("GET", "/admin/sales/{offering_id}"): SALES_READ,
}

#: The core's routes that create an offering: a key limited to some offerings may not use them
#: (what it made would be outside its own list, so it could not even read it back).
CORE_CREATES_OFFERING: frozenset[Route] = frozenset({("POST", "/events")})


class UnscopedRoute(LookupError):
    """An organizer route the scope table does not name: a defect of the deployment, refused."""


def scope_for(table: Mapping[Route, str], method: str, path: str) -> str:
    """The scope the route needs (``ANY_KEY`` for the one that needs none); UnscopedRoute else."""
    try:
        return table[(method.upper(), path)]
    except KeyError:
        raise UnscopedRoute(f"{method.upper()} {path}") from None
