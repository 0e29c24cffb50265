"""What a CDN may keep of the public catalog's answers, and for how long (issue 35, goal 5).

One place for the handlers (which send these as Cache-Control), for template.yaml's catalog cache
policy (which keys on ``CACHE_KEY_QUERY_STRINGS``; tests/contract/test_edge_cache.py holds the two
together) and for the origin load model (devstack/edge_load.py, docs/performance.md).

How fresh each answer must be follows from what changes it:

- an event's page and its seat map show what is free, which every hold changes: a CDN keeps them
  a second or two, and may serve them that much staler while it fetches them again. A stale count
  costs nothing but a refused hold (the hold decides, 409 places_unavailable), and the seat map
  was already a second old inside the function (``ListingService.seat_map``);
- listings and searches change when an organizer publishes or edits an offering: a minute at the
  edge, and an hour stale when the origin fails;
- the customer texts change with a deployment only.
"""
from __future__ import annotations

from .http import Freshness

LISTING = Freshness(browser=30, shared=60, stale=60, if_error=3600)
EVENT = Freshness(browser=1, shared=2, stale=2)
SEAT_MAP = Freshness(browser=1, shared=1, stale=1)
TEXTS = Freshness(browser=3600, shared=3600, stale=86400, if_error=86400)

#: Every query string a cached route reads (GET /events, /services, /lots, /texts): the CDN keys on
#: these and nothing else. Any other reaches the origin too (which answers 400, never cached), so
#: no parameter the key leaves out can change a cached answer.
CACHE_KEY_QUERY_STRINGS = ("city", "category", "q", "from", "to", "limit", "cursor", "lang")
