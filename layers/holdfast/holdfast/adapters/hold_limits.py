"""The per-customer, per-event count of active holds (finding 13 of issue 11).

One item per customer and event, ``CUSTOMER#<customer> / HOLDS#EVENT#<event_id>``, whose
``active`` counts the customer's bookings for the event that hold places. It changes only inside
the booking's own transactions, so it cannot drift from the bookings:

- a new hold (``commit`` of a ``Change`` with no ``before``) adds one, conditioned on ``active < limit`` (a waitlist offer too: a customer
  at the cap is skipped, not given one more);
- a booking's change takes one away in the transaction that moves a counted booking out of HELD or
  PAYMENT_PENDING (expiry, cancellation, failed payment, confirmation, review).

A booking carries ``counted_hold`` while it occupies a slot; bookings from before the counter
existed carry none and release nothing. A late payment that takes released places again is not
counted: the money is already there and the capture follows at once.

Each helper returns one TransactWriteItems entry; the callers label it ``hold_limit``, so a
cancellation says whether the cap was the reason.
"""
from __future__ import annotations

from typing import Any, Callable


def counter_key(customer_id: str, event_id: str) -> dict[str, str]:
    return {"pk": f"CUSTOMER#{customer_id}", "sk": f"HOLDS#EVENT#{event_id}"}


def _take(table: str, attrs: Callable[[dict], dict], key: dict[str, str], field: str,
          limit: int | None) -> dict[str, Any]:
    """A transaction item adding one to the counter ``field`` of ``key``, refused once it has
    reached ``limit`` (None: counted without a bound)."""
    update: dict[str, Any] = {
        "TableName": table, "Key": attrs(key),
        "UpdateExpression": f"ADD {field} :one",
        "ExpressionAttributeValues": attrs({":one": 1}),
    }
    if limit is not None:
        update["ConditionExpression"] = f"attribute_not_exists({field}) OR {field} < :limit"
        update["ExpressionAttributeValues"] = attrs({":one": 1, ":limit": limit})
    return {"Update": update}


def _give_back(table: str, attrs: Callable[[dict], dict], key: dict[str, str], field: str) -> dict[str, Any]:
    """A transaction item taking one from the counter ``field`` of ``key``."""
    return {"Update": {
        "TableName": table, "Key": attrs(key),
        "UpdateExpression": f"ADD {field} :minus_one",
        "ExpressionAttributeValues": attrs({":minus_one": -1}),
    }}


def take_slot(table: str, attrs: Callable[[dict], dict], customer_id: str, event_id: str,
              limit: int | None) -> dict[str, Any]:
    return _take(table, attrs, counter_key(customer_id, event_id), "active", limit)


def release_slot(table: str, attrs: Callable[[dict], dict], customer_id: str, event_id: str) -> dict[str, Any]:
    return _give_back(table, attrs, counter_key(customer_id, event_id), "active")


# ------------------------------------------------------------------ live holds per network address
# Issue 42, finding 13: sign-up is open, so every cap keyed on an account resets with a new one. The
# network a hold came from does not (domain/holder_address.py keys it): one item per address and
# offering, ``HOLDS#ADDR#<key> / EVENT#<offering>``, whose ``live_holds`` counts the bookings from
# that address that hold the offering's places. Taken in the hold's own transaction, conditioned on
# ``live_holds < cap``; given back in the transaction that ends the hold (expiry, cancellation,
# failed payment, confirmation, review), like the customer's slot above. An order counts once
# toward each offering it holds places of, however many of its lines name that offering.

def address_counter_key(address: str, event_id: str) -> dict[str, str]:
    return {"pk": f"HOLDS#ADDR#{address}", "sk": f"EVENT#{event_id}"}


def take_address_slot(table: str, attrs: Callable[[dict], dict], address: str, event_id: str,
                      cap: int | None) -> dict[str, Any]:
    """One more live hold of ``event_id`` from ``address``, refused at ``cap`` (None: counted
    without one, an order's offering that sets no cap beside one that does)."""
    return _take(table, attrs, address_counter_key(address, event_id), "live_holds", cap)


def release_address_slot(table: str, attrs: Callable[[dict], dict], address: str, event_id: str) -> dict[str, Any]:
    return _give_back(table, attrs, address_counter_key(address, event_id), "live_holds")
