"""The https path of a webhook attempt (adapters/webhook_transport.HttpTransport), against a real
TLS receiver on loopback: with the receiver's self-signed certificate given by configuration
(``WEBHOOK_CA_FILE``, a local stack only) the attempt is delivered, signed; without it (the
system's CA store, as on AWS) and with a certificate for another name, nothing reaches the
receiver and the attempt is retried with the TLS failure recorded. Verification is never off.
Also: a ``case.opened`` fact is one delivery, however often the bus repeats it."""
from __future__ import annotations

import http.server
import json
import ssl
import threading
from datetime import datetime, timedelta, timezone

import pytest

from devstack.paysandbox.tls import make_self_signed
from holdfast.adapters.webhook_transport import HttpTransport
from holdfast.config import ConfigurationError, Settings
from holdfast.domain import webhooks as rules
from holdfast.services.webhooks import WebhookService
from tests.unit.test_webhooks import CALLER, KEY, LOCAL, Clock, Offerings, Queue, Store, run


class Receiver:
    """An https server on 127.0.0.1 with the given certificate; keeps what it was sent."""

    def __init__(self, cert: str, key: str) -> None:
        self.received: list[dict] = []
        received = self.received

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append({"headers": dict(self.headers), "body": body, "sni_host": self.headers.get("Host")})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Receiver":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def other_name_certificate(tmp_path) -> tuple[str, str]:
    """A self-signed certificate for receiver.test only (not localhost, not 127.0.0.1)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "receiver.test")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("receiver.test")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "other.pem", tmp_path / "other.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def deliver_once(transport: HttpTransport, port: int):
    store, queue, clock = Store(), Queue(), Clock()
    service = WebhookService(store, Offerings(), clock, lambda: KEY, queue, transport, LOCAL)
    made = service.create(CALLER, f"https://localhost:{port}/hooks/in", ["order.confirmed"])
    fact = {"type": "booking.confirmed", "booking_id": "b1", "event_id": "e1", "customer_id": "alice",
            "status": "CONFIRMED", "version": 2, "at": "2031-01-01T00:00:00Z"}
    assert service.publish(fact) == 1
    message, _ = queue.sent.pop(0)
    outcome = service.attempt(message)
    delivery = next(iter(store.deliveries.values()))
    return outcome, delivery, made["secret"], clock


def test_an_https_receiver_with_its_self_signed_certificate_given_by_configuration_gets_the_signed_post():
    cert, key = make_self_signed("127.0.0.1")
    with Receiver(cert, key) as receiver:
        outcome, delivery, secret, clock = deliver_once(HttpTransport(ca_file=cert), receiver.port)
    assert outcome == "delivered" and delivery["last_attempt"]["status_code"] == 200
    assert len(receiver.received) == 1
    got = receiver.received[0]
    assert got["headers"]["Host"] == f"localhost:{receiver.port}"
    assert rules.verify(secret, got["headers"]["Holdfast-Signature"], got["body"], clock.now.timestamp())
    assert json.loads(got["body"])["data"]["booking_id"] == "b1"


def test_without_the_certificate_the_system_store_refuses_it_and_the_attempt_is_retried_unsent():
    cert, key = make_self_signed("127.0.0.1")
    with Receiver(cert, key) as receiver:
        outcome, delivery, _, _ = deliver_once(HttpTransport(), receiver.port)
    assert outcome == "retrying" and receiver.received == []
    assert delivery["status"] == "pending" and delivery["last_attempt"]["status_code"] is None
    assert "SSL" in delivery["last_attempt"]["error"] or "Certificate" in delivery["last_attempt"]["error"]


def test_a_trusted_certificate_for_another_name_is_refused_too(tmp_path):
    cert, key = other_name_certificate(tmp_path)
    with Receiver(cert, key) as receiver:
        outcome, delivery, _, _ = deliver_once(HttpTransport(ca_file=cert), receiver.port)
    assert outcome == "retrying" and receiver.received == []
    assert delivery["last_attempt"]["status_code"] is None and delivery["last_attempt"]["error"]


def test_the_ca_file_setting_is_refused_unless_the_stack_is_local():
    with pytest.raises(ConfigurationError, match="WEBHOOK_CA_FILE"):
        Settings.checked({"bookings_table_name": "bookings", "webhook_ca_file": "/tmp/ca.pem"})
    local = Settings.checked({"bookings_table_name": "bookings", "webhook_ca_file": "/tmp/ca.pem",
                              "deployment": "local"})
    assert local.webhook_ca_file == "/tmp/ca.pem"


def test_a_case_opened_fact_is_one_delivery_however_often_the_bus_repeats_it():
    store, queue, clock = Store(), Queue(), Clock()

    class Net:
        def __init__(self) -> None:
            self.posts: list = []

        def resolve(self, host, port):
            return ["93.184.216.34"]

        def post(self, scheme, host, port, path, address, headers, body, timeout):
            self.posts.append(json.loads(body))
            return 200

    net = Net()
    service = WebhookService(store, Offerings(), clock, lambda: KEY, queue, net)
    service.create(CALLER, "https://hooks.example.com/in", ["case.opened"])
    fact = {"type": "case.opened", "case_id": "c1", "case_type": "gate", "event_id": "e1", "lot_id": "e1",
            "gate_id": "g1", "reason": "unknown_plate", "opened_at": "2031-01-01T00:00:00Z"}
    assert service.publish(fact) == 1
    assert run(service, queue, clock) == ["delivered"]
    assert service.publish(dict(fact)) == 0 and queue.sent == []     # the bus repeated it: the same fact
    assert [(p["type"], p["data"]["case_id"], p["data"]["offering_id"]) for p in net.posts] == \
        [("case.opened", "c1", "e1")]
    another = {**fact, "case_id": "c2"}
    assert rules.fact_id(another) != rules.fact_id(fact) and service.publish(another) == 1
