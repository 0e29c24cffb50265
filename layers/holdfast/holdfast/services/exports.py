"""The organizer's CSV exports (``GET /admin/exports/{export}.csv``): the rows of its own offerings'
bookings (and, through a product, of what happened at their doors), filtered by offering and time,
in pages.

The rows are read from where each fact lives (the offering's bookings through its booking index,
a product's own items through its export function), never from a copy. They come in the order of
where they live: the offering's id, the booking's place in the offering's index, the row's key; a
page's cursor names the last row shown, so the next page reads on from there, and reads only what
it shows (no page reads an offering or a booking an earlier page had passed). A row written while
an export is paged through is on a later page when it lands after the cursor, and otherwise on the
next pass with the same filters (docs/api.md, "Exports")."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import kinds
from ..clock import iso, parse_iso
from ..domain import exports
from ..domain.booking import Booking
from ..domain.errors import InvalidRequest, NotFound
from ..domain.organizers import Caller
from ..domain.statuses import BookingStatus
from ..kinds.products import export_sources, resolve
from ..ports import ExportStore
from .booking_views import receipts_view
from .listing import decode_cursor, encode_cursor, page_limit


#: the position a page's cursor names: the offering, the booking's place in its index (``shard#id``,
#: empty for a product's rows) and the row's own key; the next page starts after it
Position = tuple[str, str, str]
_SEP = "\x01"


class ExportService:
    def __init__(self, store: ExportStore) -> None:
        self.store = store

    def page(self, caller: Caller, export: str, offering: str | None = None, since: str | None = None,
             until: str | None = None, cursor: str | None = None, limit: int | str | None = None) -> dict[str, Any]:
        """One page: ``text`` (the CSV, BOM and header row included), ``rows`` (how many) and
        ``next_cursor`` (None on the last page). 404 for an export that does not exist or an
        offering the key does not see; 400 for a bad time or a cursor of other filters.

        A page reads only what it shows (and one row more, to know whether another page follows):
        the offerings from the cursor's on, each one's bookings from the cursor's place in its
        index on, a chunk at a time, so a page costs the same on the first page and the last."""
        product = self._product(export)
        size = page_limit(limit, exports.PAGE_ROWS)
        low, high = _time(since, "from"), _time(until, "to")
        # the cursor is bound to the organizer and every filter: another query's cursor is a 400
        bound = f"export/{caller.organizer_id}/{export}/{offering or ''}/{low or ''}/{high or ''}"
        after = _position(decode_cursor(cursor, bound, "", "\uffff")["sk"]) if cursor else None
        rows = self._walk(caller, export, product, offering, low, high, after, size + 1)
        shown = rows[:size]
        following = encode_cursor(bound, _SEP.join(shown[-1][0])) if len(rows) > size else None
        columns = product.columns if product else exports.COLUMNS[export]
        return {"text": exports.page_text(columns, (row for _, row in shown)), "rows": len(shown),
                "next_cursor": following}

    def whole(self, caller: Caller, export: str, offering: str | None = None, since: str | None = None,
              until: str | None = None) -> dict[str, Any]:
        """Every row of an export in one CSV text (what an export job writes to its file), in the
        pages' order: ``text`` and ``rows``."""
        product = self._product(export)
        rows = self._walk(caller, export, product, offering, _time(since, "from"), _time(until, "to"), None, None)
        columns = product.columns if product else exports.COLUMNS[export]
        return {"text": exports.page_text(columns, (row for _, row in rows)), "rows": len(rows)}

    def sales_of(self, caller: Caller, offering: str, cursor: str | None = None,
                 limit: int | str | None = None) -> dict[str, Any]:
        """One offering's confirmed orders with their fiscal receipts (``GET /admin/sales/{offering_id}``,
        the operator's sales page), newest first: by the order's ``created_at`` (when it was placed,
        which never changes), then by booking id, so a page's cursor (the last order shown) is
        stable: an order confirmed while the pages are read is on the first page when placed after
        it was read, on a later page otherwise, never twice nor skipped. Each sale is the ``sales``
        export's row as JSON, with its ``receipts`` as the booking view lists them (without the
        address they were sent to); ``next_cursor`` None on the last page. 404 ``offering_not_found``
        for one the key does not see.

        The order is read from the offering's sales index (its booking index's entries that the
        write confirming each booking marked, by ``placed_at``, the booking's ``created_at``), a
        page's worth at a time from the cursor on, never the whole index: then only those bookings
        are read, and one that left CONFIRMED since is skipped, as is one no longer of this offering
        (an entry an exchange made before that write took it off the old offering's sales)."""
        size = page_limit(limit, SALES_PAGE_ROWS)
        bound = f"sales/{caller.organizer_id}/{offering}"
        self._offering_ids(caller, offering)
        before = _newest_position(decode_cursor(cursor, bound, "", "\uffff")["sk"]) if cursor else None
        shown: list[tuple[tuple[str, str], dict[str, Any]]] = []
        while len(shown) <= size:
            # newest first; an entry marked before it carried its time ("") sorts as the oldest
            chunk = self.store.sold_positions(offering, before, min(BOOKINGS_A_READ, size + 1 - len(shown)))
            if not chunk:
                break
            before = chunk[-1]
            bookings = {booking.booking_id: booking for booking in self.store.get_bookings([b for _, b in chunk])}
            for position in chunk:
                booking = bookings.get(position[1])
                if booking is not None and offering not in booking.offerings:
                    continue   # exchanged away: a mark left from before exchanges took it off
                for row in _booking_rows("sales", booking) if booking else []:
                    shown.append((position, {**row, "created_at": booking.created_at}))
        following = encode_cursor(bound, _SEP.join(shown[size - 1][0])) if len(shown) > size else None
        return {"offering_id": offering,
                "sales": [{**{column: row.get(column) for column in SALE_FIELDS},
                           "amount": {"value": row["amount"], "currency": row["currency"]},
                           "receipts": row.get("_receipts", [])} for _, row in shown[:size]],
                "next_cursor": following}

    def check(self, caller: Caller, export: str, offering: str | None = None, since: str | None = None,
              until: str | None = None) -> None:
        """The same 404s and 400s as a page, without reading any booking (an export job's request)."""
        self._product(export)
        _time(since, "from"), _time(until, "to")
        self._offering_ids(caller, offering)

    @staticmethod
    def _product(export: str) -> exports.ProductExport | None:
        products = {name: resolve(reference) for name, reference in export_sources().items()}
        if export not in exports.COLUMNS and export not in products:
            known = ", ".join([*exports.COLUMNS, *products])
            raise NotFound(f"No export {export}; there are {known}.", code="export_not_found")
        return products.get(export)

    def _offering_ids(self, caller: Caller, offering: str | None) -> list[str]:
        """The offerings the export walks, in id order (their index alone; none is read here)."""
        owned = [event_id for event_id in self.store.owned_offering_ids(caller.organizer_id)
                 if caller.sees_offering(event_id)]
        if offering is None:
            return owned
        if offering not in owned or self.store.get_event(offering) is None:
            raise NotFound(f"No offering {offering}.", code="offering_not_found")
        return [offering]

    def _walk(self, caller: Caller, export: str, product: exports.ProductExport | None, offering: str | None,
              low: str | None, high: str | None, after: Position | None,
              most: int | None) -> list[tuple[Position, dict[str, Any]]]:
        """The rows in the time window after the position ``after``, in the exports' order (offering
        id, the booking's place in the offering's index, the row's key), at most ``most``."""
        moment = product.moment if product else exports.MOMENT[export]
        found: list[tuple[Position, dict[str, Any]]] = []

        def wanted(at: str | None) -> bool:
            return not ((low and (at or "") < low) or (high and (at or "") >= high))

        for event_id in self._offering_ids(caller, offering):
            if after and event_id < after[0]:
                continue
            item = self.store.get_event(event_id)
            if item is None:   # still being created: nothing sold yet
                continue
            named = {"offering_id": event_id, "offering_name": item.get("name")}
            resume = after if after and event_id == after[0] else None
            if product is not None:
                # a product's rows of one offering, read whole, in their key's order
                rows = sorted(({**named, **row, "_key": str(row[product.key])}
                               for row in resolve(product.rows)(self.store, item)), key=lambda row: row["_key"])
                for row in rows:
                    if (resume and row["_key"] <= resume[2]) or not wanted(row.get(moment)):
                        continue
                    found.append(((event_id, "", row["_key"]), row))
                    if most is not None and len(found) >= most:
                        return found
                continue
            place = resume[1] if resume else None
            if resume and resume[2]:
                # the booking the last page stopped in: its rows after the last one shown
                for booking in self.store.get_bookings([place.partition("#")[2]]):
                    for row in _booking_rows(export, booking):
                        if row["_key"] > resume[2] and wanted(row.get(moment)):
                            found.append(((event_id, place, row["_key"]), {**named, **row}))
                            if most is not None and len(found) >= most:
                                return found
            while True:
                chunk = BOOKINGS_A_READ if most is None else max(1, min(BOOKINGS_A_READ, most - len(found)))
                places = self.store.event_booking_page(event_id, place, chunk)
                if not places:
                    break
                bookings = {booking.booking_id: booking
                            for booking in self.store.get_bookings([booking_id for _, booking_id in places])}
                for where, booking_id in places:
                    booking = bookings.get(booking_id)
                    for row in _booking_rows(export, booking) if booking else []:
                        if wanted(row.get(moment)):
                            found.append(((event_id, where, row["_key"]), {**named, **row}))
                    if most is not None and len(found) >= most:
                        return found
                if len(places) < chunk:
                    break
                place = places[-1][0]
        return found


#: an offering's sales a page of ``sales_of``, at most and by default, and what each shows
SALES_PAGE_ROWS = 50
SALE_FIELDS = ("booking_id", "created_at", "confirmed_at", "quantity", "payment_id", "payment_mode")

#: bookings read at once (one index query a shard, one batch read of 100)
BOOKINGS_A_READ = 100


def _position(text: str) -> Position:
    parts = text.split(_SEP)
    if len(parts) != 3:
        raise InvalidRequest("The cursor does not belong to this query; start again without it.",
                             code="invalid_cursor")
    return parts[0], parts[1], parts[2]


def _newest_position(text: str) -> tuple[str, str]:
    """The sales page's cursor: the last order shown, ``placed_at`` and booking id."""
    placed_at, separator, booking_id = text.partition(_SEP)
    if not separator or not booking_id or _SEP in booking_id:
        raise InvalidRequest("The cursor does not belong to this query; start again without it.",
                             code="invalid_cursor")
    return placed_at, booking_id


def _booking_rows(export: str, booking: Booking) -> list[dict[str, Any]]:
    payment = booking.payment
    confirmed_at = exports.moment((payment.paid_at if payment and payment.paid_at else None) or booking.updated_at)
    if export == "sales":
        if booking.status != BookingStatus.CONFIRMED:
            return []
        return [{"_key": booking.booking_id, "booking_id": booking.booking_id, "confirmed_at": confirmed_at,
                 "quantity": booking.places.quantity, "amount": exports.amount(booking.amount.value),
                 "currency": booking.amount.currency, "payment_id": payment.payment_id if payment else None,
                 "payment_mode": booking.payment_mode.value, "receipts": receipts_cell(booking),
                 "_receipts": _receipts(booking)}]
    if export == "attendees":
        if booking.status != BookingStatus.CONFIRMED:
            return []
        seats = list(booking.places.units) or [None] * booking.places.quantity
        return [{"_key": f"{booking.booking_id}#{n:04d}", "booking_id": booking.booking_id, "place": n,
                 "seat_id": seat, "contact_email": booking.contact_email, "language": booking.language,
                 "confirmed_at": confirmed_at} for n, seat in enumerate(seats, start=1)]
    if export == "refunds":
        refund = payment.refund if payment else None
        if not refund:
            return []
        money = refund.get("amount") or {"value": booking.amount.value, "currency": booking.amount.currency}
        return [{"_key": booking.booking_id, "booking_id": booking.booking_id,
                 "requested_at": exports.moment(refund.get("requested_at")), "amount": exports.amount(money["value"]),
                 "currency": money["currency"], "status": refund.get("status"), "reason": refund.get("reason"),
                 "payment_id": payment.payment_id if payment else None, "refund_id": refund.get("refund_id")}]
    # receipts: the lines of a paid booking's fiscal receipt
    if not payment or not payment.receipt or not payment.paid_at:
        return []
    return [{"_key": f"{booking.booking_id}#{n:04d}", "booking_id": booking.booking_id,
             "paid_at": exports.moment(payment.paid_at), "line": n, "description": line["description"],
             "quantity": int(line["quantity"]), "unit_amount": exports.amount(line["unit"]), "currency": line["currency"],
             "vat_code": int(line["vat_code"]), "payment_mode": line["payment_mode"],
             "tax_system_code": int(payment.receipt["tax_system_code"]), "payment_id": payment.payment_id}
            for n, line in enumerate(payment.receipt["lines"], start=1)]


def _receipts(booking: Booking) -> list[dict[str, Any]]:
    """A sale's receipts as its booking view lists them, without the address they were sent to."""
    if booking.payment is None or not booking.payment.receipt:
        return []
    return [{key: value for key, value in receipt.items() if key != "sent_to"} for receipt in receipts_view(booking)]


def receipts_cell(booking: Booking) -> str | None:
    """A sale's fiscal receipts in one cell, as its booking view lists them (``receipts_view``, the
    one place they are read): ``type:status``, then ``:line`` for an order line's settlement and
    ``:receipt id`` where the provider gave one, separated by spaces. Empty for a sale without
    receipts."""
    if booking.payment is None or not booking.payment.receipt:
        return None
    return " ".join(":".join(str(part) for part in (receipt["type"], receipt["status"], receipt.get("line_id"),
                                                      receipt.get("receipt_id")) if part)
                    for receipt in receipts_view(booking)) or None


def _time(text: str | None, name: str) -> str | None:
    """``from``/``to`` as the exports write times (a date is its midnight UTC); 400 otherwise."""
    if not text:
        return None
    try:
        moment: datetime = parse_iso(text if "T" in text else f"{text}T00:00:00Z")
        written = iso(moment)
    except (ValueError, OverflowError):   # not a time, or one that leaves the calendar once in UTC
        raise InvalidRequest(f"'{name}' is not an ISO 8601 date or time.", code="invalid_time", field=name) from None
    return exports.moment(written)
