"""A resumable Scan of the whole table, page by page, for the operators' one-off tools
(event_index_backfill.py, organizer_adoption.py).

Each page reads at most ``Limit`` items, so a tool's read rate stays bounded; after every page the
tool's progress is reported with the key to resume from, so a run stopped halfway (by hand, by
``max_pages``, or by a crash) goes on from the last key printed rather than from the start.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from .codec import _attrs, _plain


@dataclass
class ScanProgress:
    pages: int = 0
    #: where to resume (None: the scan is done)
    next_start: dict[str, Any] | None = field(default=None)

    def resume(self) -> str:
        """How the progress line ends: the key to resume from (quoted for a shell: a key may hold a
        quote, as the listing's ``LIST#CITY#<city>`` of a city named with an apostrophe), or that the
        scan is done."""
        return f"; resume with --start {shlex.quote(json.dumps(self.next_start))}" if self.next_start else "; done"


P = TypeVar("P", bound=ScanProgress)


def scan_pages(client: Any, request: dict[str, Any], progress: P, take: Callable[[dict[str, Any]], None],
               report: Callable[[P], None] | None = None, max_pages: int | None = None) -> P:
    """Scan from ``progress.next_start`` (the start when None), handing each item to ``take`` and
    ``progress`` to ``report`` after each page, until the table ends or ``max_pages`` pages are read."""
    while True:
        page_request = dict(request)
        if progress.next_start:
            page_request["ExclusiveStartKey"] = _attrs(progress.next_start)
        page = client.scan(**page_request)
        for found in page.get("Items", []):
            take(_plain(found))
        last = page.get("LastEvaluatedKey")
        progress.next_start = _plain(last) if last else None
        progress.pages += 1
        if report is not None:
            report(progress)
        if progress.next_start is None or (max_pages is not None and progress.pages >= max_pages):
            return progress
