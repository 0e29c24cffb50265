"""The origin's load behind CloudFront when the catalog is read hard (issue 35, goal 5).

    python -m devstack.measure.edge_load [--reads 10000] [--regional-caches 3] [--search-keys 200]

A model, not a measurement: nothing here talks to CloudFront. It takes each public route's
s-maxage from holdfast/entry/http.py (what the origin tells the edge) and works out how many requests
still reach API Gateway when ``--reads`` catalog reads per second arrive for one hot event:

- ``seats``   GET /events/{id}/seats, one cache key (the page polls it while a customer chooses);
- ``event``   GET /events/{id}, one cache key (the event's page and its counts);
- ``listing`` GET /events?..., the listing and searches, spread over ``--search-keys`` distinct
  query strings with Zipf-like popularity (the i-th most asked gets a share proportional to 1/i).

How CloudFront is modelled: viewers reach an edge location, whose misses go to its regional edge
cache, whose misses go to the origin. A cache node that receives requests for one key at rate
``rate`` (Poisson) and may keep the answer ``ttl`` seconds fetches it once per cycle of
``ttl + 1/rate`` (a fetch starts a fresh ``ttl``; the first request after it ends starts the
next): ``1 / (ttl + 1/rate)`` per second. Simultaneous misses for one key at one node are one
fetch (CloudFront collapses them), and stale-while-revalidate turns the refetch into one
background request, which leaves the count alike. The edge locations are left out, and each
regional cache is given the whole viewer rate of its share, so the figure is an upper bound: the
edge locations' own caches only thin what reaches the regional tier. With Origin Shield one
regional cache stands in front of the origin for all the others (the "Origin Shield" column).
Should a request skip the regional tier (CloudFront sends what it judges dynamic straight from
the edge location), every edge location in use fetches for itself: the last column, with
``--edge-locations`` of them.
"""
from __future__ import annotations

import argparse
import sys


def fetches_per_second(rate: float, ttl: float) -> float:
    """How often one cache node asks upstream for one key it receives ``rate`` times a second."""
    if rate <= 0:
        return 0.0
    if ttl <= 0:
        return rate
    return 1.0 / (ttl + 1.0 / rate)


def origin_rate(rate: float, keys: list[float], ttl: float, regional_caches: int) -> float:
    """Requests per second reaching the origin for ``rate`` reads a second spread over keys with
    the given shares, each regional cache receiving an equal part of every key's traffic."""
    return sum(regional_caches * fetches_per_second(rate * share / regional_caches, ttl) for share in keys)


def zipf(count: int) -> list[float]:
    weights = [1.0 / rank for rank in range(1, count + 1)]
    total = sum(weights)
    return [weight / total for weight in weights]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=float, default=10_000, help="catalog reads per second, all told")
    parser.add_argument("--regional-caches", type=int, default=3,
                        help="regional edge caches the viewers' edge locations use (a European audience: "
                             "Frankfurt, London, Ireland; every one of CloudFront's 13: 13; Origin Shield: 1)")
    parser.add_argument("--edge-locations", type=int, default=30,
                        help="edge locations the viewers reach, for the case of no regional tier")
    parser.add_argument("--search-keys", type=int, default=200, help="distinct listing/search query strings")
    parser.add_argument("--mix", default="seats=0.5,event=0.3,listing=0.2", help="share of each route")
    args = parser.parse_args(argv)
    sys.path[:0] = ["layers/holdfast"]
    from holdfast.entry import http

    mix = {name: float(share) for name, share in (part.split("=") for part in args.mix.split(","))}
    routes = [("seats", "GET /events/{id}/seats", http.SEAT_MAP_FRESHNESS, [1.0]),
              ("event", "GET /events/{id}", http.EVENT_FRESHNESS, [1.0]),
              ("listing", "GET /events?...", http.LISTING_FRESHNESS, zipf(args.search_keys))]
    print(f"{args.reads:,.0f} catalog reads/s on one hot event, {args.regional_caches} regional edge cache(s), "
          f"{args.search_keys} listing/search keys")
    print(f"{'route':24} {'reads/s':>8} {'keys':>5} {'s-maxage':>8} {'origin/s':>9} "
          f"{'origin/s (13 RECs)':>18} {'Origin Shield':>13} {'before':>8} {'edge locations only':>19}")
    totals = [0.0, 0.0, 0.0, 0.0, 0.0]
    for name, label, fresh, keys in routes:
        rate = args.reads * mix.get(name, 0.0)
        figures = [origin_rate(rate, keys, fresh.shared, args.regional_caches), origin_rate(rate, keys, fresh.shared, 13),
                   origin_rate(rate, keys, fresh.shared, 1), rate,
                   origin_rate(rate, keys, fresh.shared, args.edge_locations)]
        totals = [total + figure for total, figure in zip(totals, figures)]
        print(f"{label:24} {rate:>8,.0f} {len(keys):>5} {fresh.shared:>7}s {figures[0]:>9.1f} {figures[1]:>18.1f} "
              f"{figures[2]:>13.1f} {figures[3]:>8,.0f} {figures[4]:>19.1f}")
    print(f"{'all':24} {args.reads:>8,.0f} {'':>5} {'':>8} {totals[0]:>9.1f} {totals[1]:>18.1f} {totals[2]:>13.1f} "
          f"{totals[3]:>8,.0f} {totals[4]:>19.1f}")
    print(f"origin load: {totals[0]:.1f} requests/s ({100 * totals[0] / args.reads:.2f}% of the reads; "
          f"{totals[1]:.1f}/s if all 13 regional caches see the sale, {totals[2]:.1f}/s behind Origin Shield, "
          f"{totals[4]:.1f}/s from {args.edge_locations} edge locations with no regional tier); "
          f"before (/events* CachingDisabled): {totals[3]:,.0f}/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
