"""Time-granule items of resources, and the conditional updates that claim them.

  RES#<resource_id>#<YYYY-MM-DD>  G#<HH:MM>            one granule of a resource (UTC date and start)
  PARK#<group>#<YYYY-MM-DD>       G#<HH:MM>#<member>   one granule of a grouped resource "<group>|<member>"

One partition per resource and UTC day: a day's availability is one query (two for a local day
across UTC midnight), and bookings of different resources or days never write the same
partition. The members of a group (a product's resources that it reads together, such as the
spaces of one parking lot) share their group's day partition instead, sorted by time, so a window
over the whole group is one range query a day. An item exists only once a granule was first
claimed; a missing item is a free one.

A granule carries the session using it and its counters, each changed only by conditional updates:

  session   "S#<service>#<start>" for a group session, "B#<booking>" for a whole-resource booking
  taken     seats in use (held + sold); 0 means the resource is free at that time
  held, sold

Taking seats (HOLD, RETAKE) succeeds when the granule is free (``taken`` missing or 0), or when
it is already this session's and ``taken <= capacity - seats``: the limit is computed here, so the
condition compares one attribute with one value (DynamoDB conditions cannot add). A whole-resource
booking is a session of its own with capacity 1. So a group session in use and a private booking
exclude each other, two private bookings of one time exclude each other, a session never passes
its capacity, and when the last seat of a session goes back (``taken`` 0), anyone may take the
granule again. Giving seats back (RELEASE, SELL, UNSELL) requires this session and enough seats in
the source counter. All of a booking's granules are in its one transaction: all or none.
"""
from __future__ import annotations

from typing import Any

from ..domain.inventory import Granule, Move
from .codec import _attrs


#: The day partitions of a resource's granules.
RESOURCE_DAY = "RES#"
#: The day partitions of a group's granules. The prefix is the parking lots' (the first product to
#: group its resources) and stays: the stored granules of every deployment are keyed by it, and a
#: new one would be a migration of live claims, not a rename.
GROUP_DAY = "PARK#"


def granule_key(resource_id: str, at: str) -> dict[str, str]:
    group, grouped, member = resource_id.partition("|")
    if grouped:
        return {"pk": group_day_partition(group, at[:10]), "sk": f"G#{at[11:16]}#{member}"}
    return {"pk": day_partition(resource_id, at[:10]), "sk": f"G#{at[11:16]}"}


def day_partition(resource_id: str, utc_day: str) -> str:
    return f"{RESOURCE_DAY}{resource_id}#{utc_day}"


def group_day_partition(group: str, utc_day: str) -> str:
    """The partition of every member's granules of ``group`` on one UTC day, sorted by time."""
    return f"{GROUP_DAY}{group}#{utc_day}"


def session_of(granule: Granule, booking_id: str) -> str:
    return granule.session or f"B#{booking_id}"


def granule_claim(table: str, granule: Granule, booking_id: str, move: Move) -> dict[str, Any]:
    names = {"#session": "session", "#taken": "taken"}
    values: dict[str, Any] = {":session": session_of(granule, booking_id), ":n": granule.seats}
    if move.source == "available":
        names["#dst"] = move.target
        values[":zero"] = 0
        values[":limit"] = granule.capacity - granule.seats
        condition = ("attribute_not_exists(#taken) OR #taken = :zero OR "
                     "(#session = :session AND #taken <= :limit)")
        expression = ("SET #session = :session, #taken = if_not_exists(#taken, :zero) + :n, "
                      "#dst = if_not_exists(#dst, :zero) + :n")
    else:
        names["#src"] = move.source
        condition = "#session = :session AND #src >= :n"
        if move.target == "available":
            expression = "SET #src = #src - :n, #taken = #taken - :n"
        else:   # seats change counter, and stay taken
            del names["#taken"]
            names["#dst"] = move.target
            values[":zero"] = 0
            expression = "SET #src = #src - :n, #dst = if_not_exists(#dst, :zero) + :n"
    return {"Update": {
        "TableName": table,
        "Key": _attrs(granule_key(granule.resource_id, granule.at)),
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": _attrs(values),
    }}
