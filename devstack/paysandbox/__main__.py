"""``python -m devstack.paysandbox``: run the payment sandbox in the foreground."""
from __future__ import annotations

import argparse
import logging
import signal
import threading

from .server import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_SECRET_KEY, DEFAULT_SHOP_ID, SandboxServer


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m devstack.paysandbox",
                                description="Local YooKassa API v3 compatible payment sandbox "
                                            "(no real money).")
    p.add_argument("--host", default=DEFAULT_HOST, help="listen address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="listen port (default 8090, 0 = any free)")
    p.add_argument("--shop-id", default=DEFAULT_SHOP_ID, help="accepted shop id (default 100500)")
    p.add_argument("--secret-key", action="append", dest="secret_keys",
                   help="accepted secret key; repeatable (default sandbox_secret_local_only)")
    p.add_argument("--webhook-url", action="append", dest="webhook_urls", default=[],
                   help="notification receiver URL; repeatable")
    p.add_argument("--webhook-source-address", default="127.0.0.1",
                   help="local address notifications are sent from (default 127.0.0.1)")
    p.add_argument("--https", action="store_true", help="serve HTTPS with a fresh self-signed certificate")
    p.add_argument("--time-scale", type=float, default=1.0, help="sandbox time runs X times faster")
    p.add_argument("--pending-expiry-seconds", type=float, default=3600,
                   help="sandbox seconds before a pending payment expires (default 3600)")
    p.add_argument("--capture-expiry-seconds", type=float, default=7 * 86400,
                   help="sandbox seconds a waiting_for_capture payment stays capturable (default 7 days)")
    p.add_argument("--idempotence-ttl-seconds", type=float, default=86400)
    p.add_argument("--redelivery-window-seconds", type=float, default=86400)
    p.add_argument("--redelivery-base-seconds", type=float, default=10)
    p.add_argument("--webhook-workers", type=int, default=1,
                   help="notifications delivered at once (default 1: one at a time, in due order)")
    p.add_argument("--fault-seed", type=int, default=0)
    p.add_argument("--receipts", choices=("optional", "required"), default="optional",
                   help="required: a payment or refund without a fiscal receipt is refused, as a "
                        "Russian shop's is (default optional)")
    p.add_argument("--receipt-registration-seconds", type=float, default=1.0,
                   help="sandbox seconds a receipt stays pending before it is registered (default 1)")
    p.add_argument("--log-level", default="INFO")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    server = SandboxServer(
        host=args.host, port=args.port, shop_id=args.shop_id,
        secret_keys=args.secret_keys or [DEFAULT_SECRET_KEY], webhook_urls=args.webhook_urls,
        https=args.https, time_scale=args.time_scale,
        pending_expiry_seconds=args.pending_expiry_seconds,
        capture_expiry_seconds=args.capture_expiry_seconds,
        idempotence_ttl_seconds=args.idempotence_ttl_seconds,
        redelivery_window_seconds=args.redelivery_window_seconds,
        redelivery_base_seconds=args.redelivery_base_seconds,
        webhook_source_address=args.webhook_source_address, fault_seed=args.fault_seed,
        webhook_workers=args.webhook_workers, receipts=args.receipts,
        receipt_registration_seconds=args.receipt_registration_seconds)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server.start()
    print(f"payment sandbox: API {server.base_url}  control {server.control_url}  "
          f"shop id {server.shop_id} (local-only credentials)", flush=True)
    if server.cert_path:
        print(f"self-signed certificate: {server.cert_path}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
