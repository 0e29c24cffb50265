"""`make run`: the whole system on this machine, offline.

Starts the payment sandbox, the embedded AWS stack deployed from template.yaml (API on
127.0.0.1:3000, AWS endpoint on 127.0.0.1:4566, DynamoDB Local on a free port, each function in
worker processes of its own), aims the sandbox's webhooks at the API, creates a demo event, a
demo resource with two appointment services, a demo parking lot with a gate (all owned by the demo
organizer; the stack starts with two organizers, devstack/organizers.py), and prints a
walkthrough with the organizers' and the platform's keys. Ctrl-C stops everything.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
import urllib.request
from pathlib import Path

from devstack.organizers import LOCAL_ORGANIZERS, PLATFORM_KEY

REPO = Path(__file__).resolve().parents[1]

#: The demo organizer's key: the demo objects below are its own.
ORGANIZER_KEY = LOCAL_ORGANIZERS[0][2]
SECOND_ORGANIZER_KEY = LOCAL_ORGANIZERS[1][2]


def _post(url: str, body: dict, headers: dict[str, str]) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-port", type=int, default=3000)
    parser.add_argument("--aws-port", type=int, default=4566)
    parser.add_argument("--sandbox-port", type=int, default=8090)
    parser.add_argument("--capacity", type=int, default=500, help="places in the demo event")
    parser.add_argument("--hold-seconds", type=int, default=600, help="hold time of the demo event")
    parser.add_argument("--concurrency", type=int, default=4,
                        help="worker processes per function (a function's ReservedConcurrentExecutions caps it)")
    parser.add_argument("--in-process", action="store_true",
                        help="run every handler in this process, one invocation at a time (as the tests do)")
    parser.add_argument("--moto-dynamodb", action="store_true",
                        help="serve DynamoDB from moto (serialised) instead of DynamoDB Local")
    args = parser.parse_args(argv)

    sys.path[:0] = [str(REPO / "layers" / "holdfast"), str(REPO)]
    from devstack.aws import EmbeddedStack
    from devstack.paysandbox import SandboxControl, SandboxServer

    print("==> starting the payment sandbox", flush=True)
    sandbox = SandboxServer(host="127.0.0.1", port=args.sandbox_port)
    sandbox.start()
    print("==> deploying template.yaml onto the embedded AWS stack", flush=True)
    stack = EmbeddedStack(str(REPO), aws_port=args.aws_port, api_port=args.api_port,
                          parameters={"ProviderApiUrl": sandbox.base_url,
                                      "CaptchaVerifyUrl": f"{sandbox.origin}/smartcaptcha/validate",
                                      "CaptchaWidgetOrigin": sandbox.origin},
                          lambda_workers=not args.in_process, default_concurrency=args.concurrency,
                          dynamodb="moto" if args.moto_dynamodb else "local")
    try:
        stack.start()
        SandboxControl(sandbox.control_url).set_webhooks([stack.api_url + "/webhooks/payments"])
        # one clock for both: left alone it is the machine's, POST /dev/clock moves it
        from devstack.aws.timecontrol import link_payment_sandbox

        link_payment_sandbox(stack, sandbox)
        print("==> creating the demo events", flush=True)
        from devstack import sample_events

        organizer = {"X-Api-Key": ORGANIZER_KEY}
        event = _post(stack.api_url + "/events", {
            "name": "Holdfast demo night", "venue": "Main hall", "city": "Moscow", "category": "club",
            "starts_at": sample_events.days_ahead(60), "price": {"value": "1500.00", "currency": "RUB"},
            "capacity": args.capacity, "hold_ttl_seconds": args.hold_seconds, "payment_mode": "one_stage",
        }, {**organizer, "Idempotency-Key": f"demo-{int(time.time())}"})
        seated = _post(stack.api_url + "/events", {
            "name": "Holdfast demo concert", "venue": "Small hall", "city": "Moscow", "category": "concert",
            "starts_at": sample_events.days_ahead(61, hour=19), "price": {"value": "2500.00", "currency": "RUB"},
            "seat_map": {"rows": [{"name": row, "seats": 12} for row in "ABCDEF"]},
            "hold_ttl_seconds": args.hold_seconds, "payment_mode": "one_stage",
        }, {**organizer, "Idempotency-Key": f"demo-seated-{int(time.time())}"})
        for listed in (event, seated):  # the web pages' catalog shows published events
            _post(f"{stack.api_url}/events/{listed['event_id']}/publish", {}, organizer)
        print("==> creating the demo resource and services", flush=True)
        from devstack.demos import demo_appointments

        appointments = demo_appointments.create(stack.api_url, _post, ORGANIZER_KEY)
        print("==> creating the demo parking lot and its gate", flush=True)
        from devstack.demos import demo_parking

        parking = demo_parking.create(stack.api_url, _post, ORGANIZER_KEY)
    except Exception:
        stack.stop()
        sandbox.stop()
        raise

    api, eid = stack.api_url, event["event_id"]
    print(f"""
Holdfast is running.
  web pages          {api}/   (customers; the operator page is {api}/operator.html)
  booking API        {api}
  AWS endpoint       {stack.aws_endpoint}   (AWS_ENDPOINT_URL for boto3 / the aws CLI)
  DynamoDB           {stack.dynamodb_endpoint or stack.aws_endpoint}   ({'DynamoDB Local, AWS_ENDPOINT_URL_DYNAMODB' if stack.dynamodb_endpoint else 'moto'})
  Lambda             {'worker processes, up to ' + str(args.concurrency) + ' per function' if not args.in_process else 'in-process, one invocation at a time'}
  payment sandbox    {sandbox.base_url}   (control API {sandbox.control_url})
  sent mail          {api}/dev/mail   (every message, per address; local stack only)
  webhooks received  {api}/dev/webhooks   (register {api}/dev/webhooks/receiver as a webhook URL; local stack only)
  the clock          {api}/dev/clock  (POST {{"advance_seconds": n}} moves it; local stack only)
  demo events        {eid}: {args.capacity} places, {args.hold_seconds}s holds
                     {seated['event_id']}: a seat map of 6 rows of 12

Walkthrough (another terminal):
  curl -s {api}/events/{eid}
  curl -s -X POST {api}/events/{eid}/bookings -H 'X-Customer-Id: alice' \\
       -H 'X-Customer-Email: alice@example.org' -H 'Idempotency-Key: alice-1' -d '{{"quantity": 2}}'
  curl -s -X POST {api}/bookings/<booking_id>/payment -H 'X-Customer-Id: alice' -H 'Idempotency-Key: pay-1'
  open the confirmation_url it returns and press Pay, then:
  curl -s {api}/bookings/<booking_id> -H 'X-Customer-Id: alice'     # CONFIRMED, with its journal

{appointments}{parking}
Organizers (local keys only; each sees and changes only its own objects):
  {ORGANIZER_KEY:<22} the demo organizer, owner of everything above
  {SECOND_ORGANIZER_KEY:<22} a second organizer, owning nothing yet
  curl -s {api}/organizers/me -H 'X-Api-Key: {SECOND_ORGANIZER_KEY}'
Platform key: {PLATFORM_KEY} (POST/GET {api}/admin/organizers, .../suspend, .../resume).
Ctrl-C stops everything.
""", flush=True)

    stopped = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    stopped.wait()
    print("\n==> stopping", flush=True)
    stack.stop()
    sandbox.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
