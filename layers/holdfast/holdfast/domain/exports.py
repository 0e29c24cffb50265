"""The organizer's CSV exports: which exports there are, their columns, and how a page of rows is
written (pure: no I/O).

One format for every export, so a spreadsheet opens each alike (docs/api.md, "Exports"):
UTF-8 starting with a byte order mark (Excel reads UTF-8 without one as the machine's code page and
mangles Cyrillic), a header row, comma separated, CRLF line ends, quoted where a field needs it
(RFC 4180, Python's csv module). Times are ISO 8601 in UTC with a ``Z``; amounts are decimal with a
point and two places and no grouping (``1500.00``), the currency in a column of its own; counts
are plain integers. An absent value is an empty field.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

BOM = "\ufeff"

#: The core's exports, by name: their columns, in order. A product adds exports of its own items
#: (``Product.exports``, each a ``ProductExport``), so the core names none of them.
COLUMNS: dict[str, tuple[str, ...]] = {
    # one row per confirmed order (a booking in CONFIRMED now), with its fiscal receipts
    "sales": ("booking_id", "offering_id", "offering_name", "confirmed_at", "quantity", "amount", "currency",
              "payment_id", "payment_mode", "receipts"),
    # one row per place of a confirmed order: who comes, on which seat
    "attendees": ("booking_id", "offering_id", "offering_name", "place", "seat_id", "contact_email", "language",
                  "confirmed_at"),
    # one row per refund asked of the provider (whatever its state)
    "refunds": ("booking_id", "offering_id", "offering_name", "requested_at", "amount", "currency", "status",
                "reason", "payment_id", "refund_id"),
    # one row per line of the fiscal receipt of a paid booking
    "receipts": ("booking_id", "offering_id", "offering_name", "paid_at", "line", "description", "quantity",
                 "unit_amount", "currency", "vat_code", "payment_mode", "tax_system_code", "payment_id"),
}

#: Each core export's row moment: what ``from``/``to`` filter and the rows are ordered by (then by
#: the row's own key, to break ties).
MOMENT: dict[str, str] = {"sales": "confirmed_at", "attendees": "confirmed_at", "refunds": "requested_at",
                          "receipts": "paid_at"}


@dataclass(frozen=True)
class ProductExport:
    """An export whose rows are a product's own items: its columns (``offering_id`` and
    ``offering_name`` among them, filled by the core), the column holding the row's moment, the
    column naming the row, and ``rows``: "module:function" called as ``(store, offering) -> rows``."""

    columns: tuple[str, ...]
    moment: str
    key: str
    rows: str


#: Rows a page, at most and by default; beyond a few pages an export is a job (docs/api.md).
PAGE_ROWS = 1000




def amount(value: Any) -> str:
    """A money amount as every export writes it: ``1500.00``."""
    from decimal import Decimal

    return f"{Decimal(str(value)):.2f}"


def moment(text: str | None) -> str:
    """A stored time (``2026-12-07T11:00:00.000Z``) as every export writes it: to the second,
    UTC, ``2026-12-07T11:00:00Z``."""
    if not text:
        return ""
    return text[:19] + "Z" if len(text) >= 19 else text


def page_text(columns: tuple[str, ...], rows: Iterable[Mapping[str, Any]]) -> str:
    """One page of an export: the BOM, the header row, the rows (each field by its column name)."""
    out = io.StringIO()
    out.write(BOM)
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(column) is None else row[column] for column in columns])
    return out.getvalue()
