"""holdfast-admin: the operators' terminal tool, over the admin API.

  python -m holdfast.tools.cli reviews                         bookings waiting for a decision
  python -m holdfast.tools.cli show BOOKING_ID                 a booking and its whole journal
  python -m holdfast.tools.cli resolve BOOKING_ID ACTION --operator NAME --note TEXT
                                                         ACTION: refund | confirm | close
  python -m holdfast.tools.cli cancellation EVENT_ID           an event cancellation's progress, then its summary
  python -m holdfast.tools.cli notifications CUSTOMER          the notifications sent to a customer
                                                         (read from the table: --table, --endpoint)
  python -m holdfast.tools.cli metrics [--minutes N] [--json]  the sale's business metrics: the EMF lines
                                                         in the functions' log groups, summed
                                                         (--stack, --endpoint)
  python -m holdfast.tools.cli backfill-event-index [--page-size N] [--start KEY]
                                                         write the event-booking index entries that
                                                         bookings older than it lack (idempotent,
                                                         paged, resumable; --table, --endpoint)
  python -m holdfast.tools.cli backfill-owner-index [--page-size N] [--start KEY]
                                                         write the organizer index entries owned
                                                         resources older than GET /resources lack
                                                         (idempotent, paged, resumable)
  python -m holdfast.tools.cli rekey-open-cases PREFIX SCOPE_FIELD
                                                         move open cases opened before they were indexed
                                                         per organizer to their organizer's partition
                                                         (each product's pair: docs/data-model.md;
                                                         idempotent; --table, --endpoint)
  python -m holdfast.tools.cli reindex-search [--page-size N] [--start KEY]
                                                         write the search items of offerings published
                                                         before them, delete the old word items
                                                         (idempotent, paged, resumable; --table, --endpoint)

The API base URL comes from --api or HOLDFAST_API_URL, the organizer key from --key or
HOLDFAST_ORGANIZER_KEY, the AWS endpoint from --endpoint or AWS_ENDPOINT_URL (none: AWS itself,
with boto3's own credentials). main() takes other defaults and another client maker, so a tool
outside the deployed package can aim the same commands elsewhere.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

#: (service, endpoint) -> a boto3 client
AwsClient = Callable[[str, str], Any]


def _call(api: str, key: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(api.rstrip("/") + path, data=data, method=method,
                                     headers={"X-Api-Key": key, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _print_journal(booking: dict[str, Any]) -> None:
    print(f"booking {booking['booking_id']}  {booking['status']}  {booking['amount']['value']} "
          f"{booking['amount']['currency']}  places {booking['places']}")
    if booking.get("review"):
        print(f"  review: {booking['review']['reason']}: {booking['review']['next_step']}")
    for entry in booking.get("journal", []):
        ids = " ".join(f"{k}={v}" for k, v in entry["ids"].items() if k != "booking_id" and v)
        print(f"  {entry['at']}  {entry['actor']:<10} {entry['action']:<32} "
              f"{entry['from_status'] or '-':>15} -> {entry['to_status']:<15} {entry['decision']}  {ids}")


def _print_cancellation(view: dict[str, Any]) -> None:
    counts = view.get("summary") or view["counts"]
    print(f"event {view['event_id']} cancelled {view['cancelled_at']}: {view['reason']}")
    print(f"  job {view['state']} (execution {view['attempt']})"
          + (f", finished {view['finished_at']}" if view.get("finished_at") else ""))
    for label, key in (("bookings", "bookings"), ("holds still open", "holds_open"),
                       ("holds released", "holds_released"), ("to refund", "to_refund"), ("refunding", "refunding"),
                       ("refunded", "refunded"), ("refunds failed", "failed"), ("in review", "in_review")):
        print(f"  {label:<17} {counts.get(key, 0)}")
    for reason, count in sorted((counts.get("failed_reasons") or {}).items()):
        print(f"    failed: {reason} x{count}")
    for failure in counts.get("failures") or []:
        print(f"    {failure['booking_id']}  {failure['why']}")


def _notifications(aws_client: AwsClient, customer: str, table: str, endpoint: str) -> int:
    from ..adapters.dynamo import BookingStore

    client = aws_client("dynamodb", endpoint)
    notes = sorted(BookingStore(table, client).list_notifications(customer), key=lambda n: str(n.get("at") or ""))
    for note in notes:
        print(f"{note.get('at') or '-':<25} {note['type']:<24} {note.get('channel', 'record'):<7} "
              f"{note['booking_id']}  {note.get('subject') or note.get('message', '')}")
    print(f"{len(notes)} notification(s) for {customer}")
    return 0


def aws_client(service: str, endpoint: str):  # noqa: ANN201
    """boto3's client with its own credentials: at AWS itself, or at `endpoint` (a VPC endpoint,
    say) when one is given."""
    import boto3

    region = os.environ.get("AWS_DEFAULT_REGION", "eu-central-1")
    return boto3.client(service, region_name=region, **({"endpoint_url": endpoint} if endpoint else {}))


def _metrics(aws_client: AwsClient, stack: str, endpoint: str, minutes: float, as_json: bool) -> int:
    import time

    from .metrics_report import collect, render

    from botocore.exceptions import BotoCoreError, ClientError

    since = int((time.time() - minutes * 60) * 1000)
    try:
        summaries = collect(aws_client("logs", endpoint), stack, since)
    except (BotoCoreError, ClientError) as exc:
        print(f"cannot read the log groups /aws/lambda/{stack}-* at {endpoint or 'AWS'}: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps({name: s.as_dict() for name, s in sorted(summaries.items())}, indent=2))
    else:
        print(render(summaries))
    return 0


def _backfill(aws_client: AwsClient, table: str, endpoint: str, page_size: int, start: str | None,
              max_pages: int | None) -> int:
    from .event_index_backfill import backfill

    done = backfill(aws_client("dynamodb", endpoint), table, page_size, json.loads(start) if start else None,
                    report=lambda progress: print(progress.line(), flush=True), max_pages=max_pages)
    print(f"{done.written} index entries written, {done.present} already present, {done.bookings} bookings seen")
    return 0


def _reindex(aws_client: AwsClient, table: str, endpoint: str, page_size: int, start: str | None,
             max_pages: int | None) -> int:
    from .search_reindex import Contended, reindex

    try:
        done = reindex(aws_client("dynamodb", endpoint), table, page_size, json.loads(start) if start else None,
                       report=lambda progress: print(progress.line(), flush=True), max_pages=max_pages)
    except Contended as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{done.written} offerings reindexed, {done.current} already current, "
          f"{done.deleted} old word items deleted, {done.offerings} published offerings seen")
    return 0


def _adopt(aws_client: AwsClient, table: str, endpoint: str, organizer_id: str, page_size: int,
           start: str | None, max_pages: int | None) -> int:
    from .organizer_adoption import adopt

    try:
        done = adopt(aws_client("dynamodb", endpoint), table, organizer_id, page_size,
                     json.loads(start) if start else None,
                     report=lambda progress: print(progress.line(), flush=True), max_pages=max_pages)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{done.adopted} objects adopted by {organizer_id}, {done.owned} already owned")
    return 0


def main(argv: list[str] | None = None, *, defaults: Mapping[str, str] | None = None,
         clients: AwsClient = aws_client) -> int:
    """`defaults` (api, key, endpoint) stand where the environment says nothing; `clients` makes
    the AWS clients. Another entry point aims the same commands elsewhere through them."""
    defaults = defaults or {}
    endpoint = os.environ.get("AWS_ENDPOINT_URL", defaults.get("endpoint", ""))
    parser = argparse.ArgumentParser(prog="holdfast-admin", description="Operate manual reviews and read journals.")
    parser.add_argument("--api", default=os.environ.get("HOLDFAST_API_URL", defaults.get("api")))
    parser.add_argument("--key", default=os.environ.get("HOLDFAST_ORGANIZER_KEY", defaults.get("key")))
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("reviews", help="list bookings in manual review")
    show = commands.add_parser("show", help="show a booking and its journal")
    show.add_argument("booking_id")
    resolve = commands.add_parser("resolve", help="decide a review")
    resolve.add_argument("booking_id")
    resolve.add_argument("action", choices=["refund", "confirm", "close"])
    resolve.add_argument("--operator", required=True)
    resolve.add_argument("--note", required=True)
    cancellation = commands.add_parser("cancellation", help="an event cancellation's progress and summary")
    cancellation.add_argument("event_id")
    notes = commands.add_parser("notifications", help="list a customer's notifications (the local sink)")
    notes.add_argument("customer")
    notes.add_argument("--table", default=os.environ.get("BOOKINGS_TABLE_NAME", "holdfast-BookingsTable"))
    notes.add_argument("--endpoint", default=endpoint,
                       help="DynamoDB endpoint ('' for AWS itself)")
    emitted = commands.add_parser("metrics", help="the business metrics the functions emitted (EMF in their logs)")
    emitted.add_argument("--stack", default=os.environ.get("HOLDFAST_STACK_NAME", "holdfast"),
                         help="stack name: log groups /aws/lambda/<stack>-*")
    emitted.add_argument("--minutes", type=float, default=60.0, help="how far back to look")
    emitted.add_argument("--json", action="store_true", help="sum, samples and max of each metric as JSON")
    emitted.add_argument("--endpoint", default=endpoint,
                         help="CloudWatch Logs endpoint ('' for AWS itself)")
    backfill = commands.add_parser("backfill-event-index",
                                   help="write the event-booking index entries of bookings older than the index")
    backfill.add_argument("--table", default=os.environ.get("BOOKINGS_TABLE_NAME", "holdfast-BookingsTable"))
    backfill.add_argument("--endpoint", default=endpoint,
                          help="DynamoDB endpoint ('' for AWS itself)")
    backfill.add_argument("--page-size", type=int, default=100, help="items read per Scan call")
    backfill.add_argument("--start", help="resume from this key (printed after every page)")
    backfill.add_argument("--max-pages", type=int, help="stop after this many pages (resume with --start)")
    reindexing = commands.add_parser("reindex-search",
                                     help="write the search items of offerings published before them")
    reindexing.add_argument("--table", default=os.environ.get("BOOKINGS_TABLE_NAME", "holdfast-BookingsTable"))
    reindexing.add_argument("--endpoint", default=endpoint, help="DynamoDB endpoint ('' for AWS itself)")
    reindexing.add_argument("--page-size", type=int, default=100, help="items read per Scan call")
    reindexing.add_argument("--start", help="resume from this key (printed after every page)")
    reindexing.add_argument("--max-pages", type=int, help="stop after this many pages (resume with --start)")
    rekey = commands.add_parser("rekey-open-cases",
                                help="index open cases opened before the per-organizer index under their organizer")
    rekey.add_argument("prefix", help="the cases' key prefix (a product's; docs/data-model.md)")
    rekey.add_argument("scope_field", help="the case field naming its offering (docs/data-model.md)")
    rekey.add_argument("--table", default=os.environ.get("BOOKINGS_TABLE_NAME", "holdfast-BookingsTable"))
    rekey.add_argument("--endpoint", default=endpoint, help="DynamoDB endpoint ('' for AWS itself)")
    adoption = commands.add_parser("adopt-unowned",
                                   help="give every object written before organizers existed to one organizer")
    adoption.add_argument("organizer_id")
    adoption.add_argument("--table", default=os.environ.get("BOOKINGS_TABLE_NAME", "holdfast-BookingsTable"))
    adoption.add_argument("--endpoint", default=endpoint, help="DynamoDB endpoint ('' for AWS itself)")
    adoption.add_argument("--page-size", type=int, default=100, help="items read per Scan call")
    adoption.add_argument("--start", help="resume from this key (printed after every page)")
    adoption.add_argument("--max-pages", type=int, help="stop after this many pages (resume with --start)")
    owners = commands.add_parser("backfill-owner-index",
                                 help="write the organizer index entries of owned resources made before the index")
    owners.add_argument("--table", default=os.environ.get("BOOKINGS_TABLE_NAME", "holdfast-BookingsTable"))
    owners.add_argument("--endpoint", default=endpoint, help="DynamoDB endpoint ('' for AWS itself)")
    owners.add_argument("--page-size", type=int, default=100, help="items read per Scan call")
    owners.add_argument("--start", help="resume from this key (printed after every page)")
    owners.add_argument("--max-pages", type=int, help="stop after this many pages (resume with --start)")
    args = parser.parse_args(argv)

    if args.command == "backfill-owner-index":
        from .organizer_adoption import backfill_owner_index

        done = backfill_owner_index(clients("dynamodb", args.endpoint), args.table, args.page_size,
                                    json.loads(args.start) if args.start else None,
                                    report=lambda progress: print(progress.line(), flush=True),
                                    max_pages=args.max_pages)
        print(f"{done.written} index entries written, {done.present} present")
        return 0
    if args.command == "adopt-unowned":
        return _adopt(clients, args.table, args.endpoint, args.organizer_id, args.page_size, args.start,
                      args.max_pages)
    if args.command == "rekey-open-cases":
        from ..adapters.checkin_cases_store import rekey_open_cases
        from ..adapters.codec import Table

        moved, left = rekey_open_cases(Table(args.table, clients("dynamodb", args.endpoint)), args.prefix,
                                       args.scope_field)
        print(f"{moved} open cases moved to their organizer's list, {left} of no organizer left")
        return 0
    if args.command == "reindex-search":
        return _reindex(clients, args.table, args.endpoint, args.page_size, args.start, args.max_pages)
    if args.command == "backfill-event-index":
        return _backfill(clients, args.table, args.endpoint, args.page_size, args.start, args.max_pages)

    if args.command == "metrics":
        return _metrics(clients, args.stack, args.endpoint, args.minutes, args.json)

    if args.command == "notifications":
        return _notifications(clients, args.customer, args.table, args.endpoint)
    if not args.api or not args.key:
        parser.error("the admin API needs --api and --key (or HOLDFAST_API_URL and HOLDFAST_ORGANIZER_KEY)")
    if args.command == "reviews":
        listed, path = 0, "/admin/reviews"
        while True:   # the list comes in pages: every page, in order
            status, body = _call(args.api, args.key, "GET", path)
            if status != 200:
                break
            for booking in body["reviews"]:
                print(f"{booking['booking_id']}  {booking['updated_at']}  {booking['review']['reason']}")
            listed += len(body["reviews"])
            if not body.get("next_cursor"):
                print(f"{listed} booking(s) in review")
                break
            path = "/admin/reviews?" + urllib.parse.urlencode({"cursor": body["next_cursor"]})
    elif args.command == "cancellation":
        status, body = _call(args.api, args.key, "GET", f"/events/{args.event_id}/cancellation")
        if status == 200:
            _print_cancellation(body)
    elif args.command == "show":
        status, body = _call(args.api, args.key, "GET", f"/admin/bookings/{args.booking_id}")
        if status == 200:
            _print_journal(body)
    else:
        status, body = _call(args.api, args.key, "POST", f"/admin/reviews/{args.booking_id}/resolve",
                             {"action": args.action, "operator": args.operator, "note": args.note})
        if status == 200:
            print(f"{body['booking_id']} is now {body['status']}")
    if status != 200:
        error = (body or {}).get("error", {}) if isinstance(body, dict) else {}
        print(f"error {status}: {error.get('code', '')} {error.get('message', body)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
