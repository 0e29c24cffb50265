"""The public catalog: listing and search of published events, the organizer's edit and publish,
and the live seat map. Everything here is served by key queries on index items (see
``holdfast.domain.search``); nothing scans the table.

Publishing is a catalog flag: an event created with ``POST /events`` is bookable at once by its id
(the existing contract: organizers share the link, and presales work before the public listing),
but it appears in ``GET /events`` only after ``POST /events/{id}/publish``.
"""
from __future__ import annotations

import base64
import binascii
import json
import time
from typing import Any, Callable, Mapping

from .. import kinds
from ..clock import iso
from ..domain import pricing, search
from ..domain.search import EventSearch
from ..domain.event_changes import announced_changes, refund_window
from ..domain.exchange import change_terms
from ..domain.errors import InvalidRequest, NotFound, TooBusy
from ..domain.inventory import natural_key
from ..domain.offering import HOLD_TERMS
from ..domain.organizers import Caller, require_owner
from ..ports import Catalog, Clock, Listing, StaleBooking, TransientStoreError
from . import transitions

UPDATE_ATTEMPTS = 5
SEAT_MAP_CACHE_SECONDS = 1.0
SEAT_MAP_CACHE_EVENTS = 500
MAX_SORT_KEY_BYTES = 1024   # DynamoDB's limit for a sort key


class ListingService:
    def __init__(self, store: Listing, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._seat_maps: dict[str, tuple[float, dict[str, Any]]] = {}

    # ------------------------------------------------------------------------------ organizer

    def publish(self, event_id: str, caller: Caller | None = None) -> dict[str, Any]:
        """List the event. Publishing a published event changes nothing."""
        return self._change(event_id, lambda event: {} if event.get("published") else {
            "published": True, "published_at": iso(self.clock())}, caller=caller)

    def update(self, event_id: str, patch: Mapping[str, Any], caller: Caller | None = None) -> dict[str, Any]:
        """Change the event (``patch``: the fields to change, each with its new value). A change of
        start time or venue is announced (``event.changed``, with before and after) in the same
        transaction; the same values again change and announce nothing."""
        changes = dict(patch)
        if "starts_at" in changes:
            changes["starts_at"] = iso(changes["starts_at"])
        return self._change(event_id, lambda event: {k: v for k, v in changes.items() if event.get(k) != v},
                            announce=True, caller=caller)

    def link_companion(self, event_id: str, offering_id: str, before_minutes: int, after_minutes: int,
                       caller: Caller | None = None, missing: str = "offering_not_found") -> dict[str, Any]:
        """Sell another offering of the organizer's with the event's tickets, for the window from
        ``before_minutes`` before the start to ``after_minutes`` after it (domain/companion.py);
        ``missing``: the code of an offering that is not the organizer's. The same link again
        changes nothing."""
        if offering_id == event_id:
            raise NotFound(f"No offering {offering_id} to sell with itself.", code=missing)
        require_owner(self.store.get_event(offering_id), caller, NotFound(f"No {offering_id}.", code=missing))
        link = {"offering_id": offering_id, "before_minutes": before_minutes, "after_minutes": after_minutes}
        return self._change(event_id, lambda event: {} if event.get("companion") == link else {"companion": link},
                            caller=caller)

    def _change(self, event_id: str, decide, announce: bool = False, caller: Caller | None = None) -> dict[str, Any]:
        def write(event: dict[str, Any]) -> dict[str, Any]:
            changes = decide(event)
            if not changes:   # (the event itself, not a listing's copy: what customers may change is its)
                return self.view(event) | change_terms(event)
            now = self.clock()
            announced = announced_changes(event, changes) if announce else {}
            changes = {**changes, **refund_window(event, changes, now)} if announced else changes
            version = int(event.get("catalog_version") or 0)
            after = {**event, **changes, "catalog_version": version + 1}
            drop = self.index_keys(event) if event.get("published") else []
            # a cancelled event is listed no more (its cancel dropped the items): an edit or a
            # publish after it puts none back
            put = self.index_items(after) if after.get("published") and not after.get("cancelled_at") else []
            outbox = {"type": "event.changed", "event_id": event_id, "version": version + 1, "at": iso(now),
                      "name": event["name"], "changes": announced,
                      **({"change_refund_until": changes["change_refund_until"]}
                         if "change_refund_until" in changes else {})} if announced else None
            # what a hold decides on changed: every container's copy of the offering is refused
            # by the sale gate from this commit on, and read again (adapters/sale_gate.py)
            terms = version + 1 if HOLD_TERMS & changes.keys() else None
            self.store.update_event_listing(event_id, version, {**changes, "catalog_version": version + 1}, drop, put,
                                            outbox=outbox, terms_version=terms)
            return self.view(after) | change_terms(after)

        return transitions.decide_again(lambda: self._read(event_id, caller), write, attempts=UPDATE_ATTEMPTS,
                                        exhausted=TooBusy(), retry_on=(StaleBooking, TransientStoreError))

    def _read(self, event_id: str, caller: Caller | None = None) -> dict[str, Any]:
        return require_owner(self.store.get_event(event_id), caller,
                             NotFound(f"No event {event_id}.", code="event_not_found"))

    @staticmethod
    def index_keys(event: dict[str, Any]) -> list[tuple[str, str]]:
        """(pk, sk) of every index item of the published ``event``: its listing partitions and its
        text search items (``search.find_keys``)."""
        words = search.search_words(event["name"], event["venue"], event["city"], event["category"])
        return ([(pk, search.sort_key(event)) for pk in search.index_partitions(event)]
                + search.find_keys(FIND, words, search.sort_key(event)))

    @classmethod
    def index_items(cls, event: dict[str, Any]) -> list[dict[str, Any]]:
        shown = {
            "event_id": event["event_id"], "name": event["name"],
            "venue": event["venue"], "city": event["city"], "category": event["category"],
            "starts_at": event["starts_at"], "price": event["price"], "currency": event["currency"],
            "inventory_kind": event["inventory_kind"],
            "city_key": search.normalise(event["city"]), "category_key": search.normalise(event["category"]),
            "words": search.search_words(event["name"], event["venue"], event["city"], event["category"]) or ["-"],
        }
        return [{"pk": pk, "sk": sk, **shown} for pk, sk in cls.index_keys(event)]

    @staticmethod
    def view(event: dict[str, Any]) -> dict[str, Any]:
        return {
            "event_id": event["event_id"], "name": event["name"], "venue": event["venue"], "city": event["city"],
            "category": event["category"], "starts_at": event["starts_at"],
            "price": {"value": event["price"], "currency": event["currency"]},
            "inventory": kinds.of_event(event).label,
            "published": bool(event.get("published")),
        }

    # --------------------------------------------------------------------------------- public

    def list_events(self, query: EventSearch) -> dict[str, Any]:
        now = iso(self.clock())
        lower = iso(query.date_from) if query.date_from else now
        upper = (iso(query.date_to) if query.date_to else "9999") + "~"
        if lower > upper:
            raise InvalidRequest("'from' is after 'to'.", code="invalid_date_range")
        # what has started is sold no more (a kind's check_time): listed from just after now,
        # whatever 'from' asks ("#~" sorts after every event starting at this very instant)
        lower = max(lower, now + "#~")
        if lower > upper:
            return {"events": [], "next_cursor": None}
        words = searched_words(city=query.city, category=query.category, q=query.q)
        if words:
            def wanted(item: dict[str, Any]) -> bool:
                return (lower <= item["starts_at"] <= upper
                        and all(search.normalise(value) == item[key] for key, value in
                                (("city_key", query.city), ("category_key", query.category)) if value))

            found, cursor = find(self.store, FIND, words, wanted, lambda item: item["sk"].split("\x01", 2)[2],
                                 query.limit, query.cursor)
            return {"events": [self.view(item | {"published": True}) for item in found], "next_cursor": cursor}
        partition = search.list_partition(query.city, query.category)
        start = decode_cursor(query.cursor, partition, lower, upper) if query.cursor else None
        items, more = self.store.query_listing(partition, lower, upper, query.limit, start)
        events = [self.view(item | {"published": True}) for item in items]
        cursor = encode_cursor(partition, items[-1]["sk"]) if more and items else None
        return {"events": events, "next_cursor": cursor}

    def seat_map(self, event_id: str) -> dict[str, Any]:
        """Every seat and its state (no booking or customer data). Cached for a second per
        container: thousands of viewers polling every second cost one query a second here."""
        cached = self._seat_maps.get(event_id)
        now = time.monotonic()
        if cached and now - cached[0] < SEAT_MAP_CACHE_SECONDS:
            return cached[1]
        event = self._read(event_id)
        states = kinds.of_event(event).unit_states(self.store, event_id)
        if states is None:
            raise InvalidRequest("This event has no seat map.", code="seats_not_supported")
        counts = {"available": 0, "held": 0, "sold": 0}
        for state in states.values():
            counts[state] = counts.get(state, 0) + 1
        categories = pricing.seat_category_map(event)
        seats = [{"seat": seat, "state": states[seat]} | ({"price_category": categories[seat]} if seat in categories else {})
                 for seat in sorted(states, key=natural_key)]
        answer = {"event_id": event_id, "counts": counts, "seats": seats}
        answer |= {key: value for key, value in pricing.price_list_view(event).items() if key != "zones"}
        if len(self._seat_maps) >= SEAT_MAP_CACHE_EVENTS:
            self._seat_maps.clear()
        self._seat_maps[event_id] = (now, answer)
        return answer


def index_items_of(offering: dict[str, Any]) -> list[dict[str, Any]]:
    """The index items the publish of ``offering`` writes (its product's listing, or an event's)."""
    from ..kinds import products

    product = products.of_kind(offering.get("inventory_kind") or "")
    build = products.resolve(product.listing) if product and product.listing else ListingService.index_items
    return build(offering)


def page_limit(limit: int | str | None, most: int, *, required: bool = False) -> int:
    """A page's size as a query string gives it (absent: ``most``, unless ``required``: the caller
    gave its default already, so an empty one is refused); 400 ``invalid_limit`` unless a whole
    number from 1 to ``most``. The one rule for every page's limit."""
    try:
        size = int(limit) if required or limit not in (None, "") else most
    except (TypeError, ValueError):
        raise InvalidRequest("limit must be a whole number.", code="invalid_limit") from None
    if not 1 <= size <= most:
        raise InvalidRequest(f"limit must be 1 to {most}.", code="invalid_limit")
    return size


def encode_cursor(partition: str, sort_key: str) -> str:
    raw = json.dumps({"p": partition, "s": sort_key}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, partition: str, lower: str, upper: str) -> dict[str, str]:
    """The start key a cursor names. DynamoDB refuses (ValidationException) a start key outside
    the query's sort key range, so a cursor from another query is this query's 400."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("p") != partition or not isinstance(data.get("s"), str):
            raise ValueError
        if not lower <= data["s"] <= upper or len(data["s"].encode()) > MAX_SORT_KEY_BYTES:
            raise ValueError
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidRequest("The cursor does not belong to this query; start again without it.",
                             code="invalid_cursor") from None
    return {"pk": partition, "sk": data["s"]}


def searched_words(q: str | None, **keys: str | None) -> list[str]:
    """The words of ``q`` to look for; 400 when a filter (``keys``, or a word) is too long for a
    key once normalised, or ``q`` has no word at all."""
    for name, value, fits in [*((name, value, search.fits_key) for name, value in keys.items()),
                              ("q", q, search.words_fit)]:
        if value and not fits(value):
            raise InvalidRequest(f"'{name}' is too long once normalised.", code="query_too_long", field=name,
                                 max_bytes=search.MAX_KEY_PART_BYTES)
    words = search.tokens(q) if q else []
    if q and not words:
        raise InvalidRequest("The search text has no words to look for.", code="invalid_query")
    return words


#: Where the events' text search items are (a shelf's are under ``<shelf>#FIND``).
FIND = "FIND"
#: The most search items one of a search's (at most two) requests reads (one Query answers up to
#: 1 MB, and a search item is a few hundred bytes): ranking needs every match, so a prefix of
#: fewer than 5 letters that more items share is ranked among the first this many by word.
FIND_CANDIDATES = 1000


def find(store: Catalog, space: str, words: list[str], wanted: Callable[[dict[str, Any]], bool],
         order: Callable[[dict[str, Any]], str], limit: int, cursor: str | None
         ) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the offerings whose search words match every word of ``words`` (normalised
    tokens of a query) and that ``wanted`` keeps, ranked by how well they match (whole words,
    then prefixes, then one typo) and then by ``order``; and the cursor of the next page.

    Reads the longest word's one or two ranges (``search.find_reads``) and checks the other words
    against each item's ``words`` in memory: at most two Query requests per search."""
    shapes = [search.skeleton(word)[:search.MAX_SEARCH_WORD_LENGTH + 1] for word in words]
    shapes = [shape for shape in shapes if len(shape) >= search.MIN_TOKEN_LENGTH]
    if not shapes:
        # every word folds to less than the shortest indexed one ("ъъ" is nothing at all)
        return [], None
    main = max(shapes, key=len)
    others = list(shapes)
    others.remove(main)
    signature = " ".join(sorted(shapes))
    offset = decode_offset(cursor, signature) if cursor else 0
    best: dict[str, tuple[tuple[int, str], dict[str, Any]]] = {}
    complete = True
    for read, (pk, lower, upper) in enumerate(search.find_reads(space, main)):
        if read and complete and sum(rank[0] < search.TYPO for rank, _ in best.values()) > offset + limit:
            # the second range adds typos in the first letters only (its other words start as
            # the query does, and the first range, read to its end, had them): they rank after
            # this whole page. When the first range was cut short, the second holds the query's
            # own words too (every one has the query's tail at its offset), so it is read.
            break
        items, more = store.query_listing(pk, lower, upper, FIND_CANDIDATES, None, one_request=True)
        complete = complete and not more
        for item in items:
            score = search.match(main, search.indexed_word(item["sk"]))
            if score is None or not wanted(item):
                continue
            for other in others:
                fits = [found for found in (search.match(other, word) for word in item["words"]) if found is not None]
                if not fits:
                    break
                score += min(fits)
            else:
                rank = (score, order(item))
                key = item["sk"].rsplit("\x01", 1)[-1]
                if key not in best or rank < best[key][0]:
                    best[key] = (rank, item)
    ranked = [item for _, item in sorted(best.values(), key=lambda pair: pair[0])]
    page = ranked[offset:offset + limit]
    more = offset + limit < len(ranked)
    return page, encode_cursor(signature, str(offset + limit)) if more else None


def decode_offset(cursor: str, signature: str) -> int:
    """How many ranked results a search's cursor has shown; 400 for a cursor of another query."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("p") != signature or not str(data.get("s", "")).isdigit():
            raise ValueError
        offset = int(data["s"])
        if offset > FIND_CANDIDATES * 2:
            raise ValueError
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidRequest("The cursor does not belong to this query; start again without it.",
                             code="invalid_cursor") from None
    return offset


# ------------------------------------------------------------------------------ shelves
# A product lists its own offerings (services, lots) on a shelf of its own (domain/search.py):
# published by the same one transaction as an event, read a page at a time by key.

def publish_offering(store: Catalog, clock: Clock, read: Callable[[], dict[str, Any]],
                     index_items: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> dict[str, Any]:
    """Mark the offering ``read`` returns published and write ``index_items`` of it, in one
    transaction conditioned on its catalog version (read again when another change won). The
    offering as it is now; publishing a published offering changes nothing."""
    def write(event: dict[str, Any]) -> dict[str, Any]:
        if event.get("published"):
            return event
        version = int(event.get("catalog_version") or 0)
        changes = {"published": True, "published_at": iso(clock()), "catalog_version": version + 1}
        after = {**event, **changes}
        # a cancelled offering is listed no more (its cancel dropped its items): none put back
        store.update_event_listing(event["event_id"], version, changes, [],
                                   [] if after.get("cancelled_at") else index_items(after))
        return after

    return transitions.decide_again(read, write, attempts=UPDATE_ATTEMPTS, exhausted=TooBusy(),
                                    retry_on=(StaleBooking, TransientStoreError))


def shelf_page(store: Catalog, shelf: str, city: str | None, q: str | None, limit: int,
               cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of a shelf's index items: by name, those in ``city``, after ``cursor``; or with
    ``q``, those matching it, best first (``find``). And the cursor of the next page (None: this
    was the last)."""
    words = searched_words(city=city, q=q)
    if words:
        return find(store, f"{shelf}#{FIND}", words,
                    lambda item: not city or item["city_key"] == search.normalise(city),
                    lambda item: item["sk"].split("\x01", 2)[2], limit, cursor)
    partition = search.shelf_partition(shelf, city)
    lower, upper = search.NAME_KEYS
    start = decode_cursor(cursor, partition, lower, upper) if cursor else None
    items, more = store.query_listing(partition, lower, upper, limit, start)
    return items, encode_cursor(partition, items[-1]["sk"]) if more and items else None


def shelf_items(shelf: str, offering: dict[str, Any], fields: dict[str, Any], *texts: str) -> list[dict[str, Any]]:
    """The index items that list ``offering`` on ``shelf``, each carrying ``fields`` (what its
    listing shows) and what the filters read; ``texts`` are its searchable words."""
    name_key = search.name_sort_key(offering["name"], offering["event_id"])
    words = search.search_words(*texts)
    common = {**fields, "city_key": search.normalise(offering.get("city") or ""), "words": words or ["-"]}
    listed = [{"pk": pk, "sk": name_key, **common} for pk in search.shelf_partitions(shelf, offering.get("city") or "")]
    return listed + [{"pk": pk, "sk": sk, **common}
                     for pk, sk in search.find_keys(f"{shelf}#{FIND}", words, name_key.removeprefix(search.NAME_KEYS[0]))]
