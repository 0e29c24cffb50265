"""Webhooks: the signature scheme, the URL and address rules (DNS rebinding included), the retry
schedule, and the service's deliveries over in-memory fakes of its store, queue and network."""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from holdfast.domain import webhooks as rules
from holdfast.domain.errors import Conflict, InvalidRequest, NotFound
from holdfast.domain.organizers import Caller
from holdfast.services.webhooks import WebhookService

LOCAL = rules.parse_networks("127.0.0.0/8")
KEY = b"k" * 32


# ------------------------------------------------------------------------------ the signature

def test_the_signature_is_hmac_sha256_of_the_timestamp_a_dot_and_the_body():
    body = '{"id":"evt_1"}'
    header = rules.signature_header("whsec_abc", 1700000000, body)
    expected = hmac.new(b"whsec_abc", b"1700000000." + body.encode(), hashlib.sha256).hexdigest()
    assert header == f"t=1700000000,v1={expected}"
    assert rules.verify("whsec_abc", header, body, now=1700000010)


@pytest.mark.parametrize("change", ["body", "secret", "stale", "garbled"])
def test_a_changed_body_another_secret_an_old_timestamp_or_a_garbled_header_does_not_verify(change):
    body, secret, now = '{"id":"evt_1"}', "whsec_abc", 1700000000
    header = rules.signature_header(secret, now, body)
    if change == "body":
        body = '{"id":"evt_2"}'
    elif change == "secret":
        secret = "whsec_abd"
    elif change == "stale":
        now += 301
    else:
        header = "v1=deadbeef"
    assert not rules.verify(secret, header, body, now=now)


def test_the_secret_is_derived_from_the_key_the_endpoint_and_its_salt():
    one = rules.derive_secret(KEY, "wh_1", "salt")
    assert one.startswith("whsec_") and one == rules.derive_secret(KEY, "wh_1", "salt")
    assert len({one, rules.derive_secret(KEY, "wh_2", "salt"), rules.derive_secret(KEY, "wh_1", "other"),
                rules.derive_secret(b"j" * 32, "wh_1", "salt")}) == 4


# ------------------------------------------------------------------------------ the URLs

@pytest.mark.parametrize("url", ["https://hooks.example.com/in", "https://93.184.216.34:8443/x?y=1",
                                 "https://[2606:4700::1111]/hook"])
def test_https_to_a_public_host_is_accepted(url):
    assert rules.check_url(url).scheme == "https"


@pytest.mark.parametrize("url,reason", [
    ("https://127.0.0.1/x", "loopback"), ("https://10.1.2.3/x", "private"), ("https://192.168.0.1/", "private"),
    ("https://172.16.5.5/", "private"), ("https://169.254.169.254/latest/meta-data", "link_local"),
    ("https://[::1]/", "loopback"), ("https://[fe80::1]/", "link_local"), ("https://[fd00::1]/", "private"),
    ("https://100.64.0.1/", "reserved"), ("https://0.0.0.0/", "unspecified"), ("https://localhost/", "loopback"),
    ("https://[::ffff:127.0.0.1]/", "loopback"), ("https://224.0.0.1/", "multicast"),
])
def test_an_address_literal_that_is_not_public_is_refused_at_registration(url, reason):
    with pytest.raises(InvalidRequest) as refused:
        rules.check_url(url)
    assert refused.value.code == "webhook_url_not_public" and refused.value.details["reason"] == reason


@pytest.mark.parametrize("url", ["http://hooks.example.com/", "ftp://hooks.example.com/", "https://user:pw@example.com/",
                                 "https://example.com/#frag", "/relative", "https://", "https://exa mple.com/",
                                 "https://example.com:99999/", "https://example.com/" + "a" * 2048])
def test_anything_but_a_plain_https_url_is_invalid(url):
    with pytest.raises(InvalidRequest) as refused:
        rules.check_url(url)
    assert refused.value.code == "webhook_url_invalid"


def test_plain_http_to_loopback_only_where_the_local_networks_allow_it():
    with pytest.raises(InvalidRequest):
        rules.check_url("http://127.0.0.1:3000/dev/webhooks/receiver")
    assert rules.check_url("http://127.0.0.1:3000/dev/webhooks/receiver", LOCAL).port == 3000
    # a local stack still refuses plain http to a public address and inner ranges it was not given
    with pytest.raises(InvalidRequest):
        rules.check_url("http://93.184.216.34/", LOCAL)
    with pytest.raises(InvalidRequest):
        rules.check_url("https://10.0.0.1/", LOCAL)


def test_every_resolved_address_must_be_public_at_each_attempt():
    target = rules.check_url("https://hooks.example.com/in")
    assert rules.check_addresses(target, ["93.184.216.34"]) == "93.184.216.34"
    for answer in (["93.184.216.34", "10.0.0.5"], ["169.254.169.254"], ["::1"], []):
        with pytest.raises(ValueError):
            rules.check_addresses(target, answer)


def test_a_stack_given_local_networks_reaches_only_them():
    target = rules.check_url("https://93.184.216.34/in", LOCAL)
    with pytest.raises(ValueError, match="outside_local_networks"):
        rules.check_addresses(target, ["93.184.216.34"], LOCAL)
    local = rules.check_url("http://127.0.0.1:3000/in", LOCAL)
    assert rules.check_addresses(local, ["127.0.0.1"], LOCAL) == "127.0.0.1"


def test_only_events_the_engine_publishes_may_be_chosen():
    assert rules.check_event_types(["order.confirmed", "order.confirmed", "checkin.created"]) == \
        ("order.confirmed", "checkin.created")
    for events in ([], ["order.confirmed", "order.shipped"], ["webhook.test"]):
        with pytest.raises(InvalidRequest) as refused:
            rules.check_event_types(events)
        assert refused.value.code == "unknown_webhook_event" and "order.confirmed" in refused.value.details["known"]


def test_the_retry_schedule_backs_off_and_ends_after_24_hours():
    start, now, delays = 0, 0, []
    attempts = 0
    while True:
        attempts += 1
        delay = rules.next_delay(attempts, start, now)
        if delay is None:
            break
        delays.append(delay)
        now += delay
    assert delays[:5] == [30, 120, 600, 1800, 3600] and max(delays) == 21600
    assert now == 24 * 3600 and len(delays) == 10   # eleven attempts, the last at the 24th hour


def test_the_body_names_the_booking_and_its_offering_never_the_customer():
    fact = {"type": "booking.confirmed", "booking_id": "b1", "event_id": "e1", "customer_id": "alice",
            "contact_email": "alice@example.com", "status": "CONFIRMED", "version": 3, "at": "2031-01-01T00:00:00Z"}
    event_id = rules.fact_id(fact)
    body = json.loads(rules.body(event_id, "order.confirmed", "org1", "2031-01-01T00:00:01Z", fact))
    assert body["data"] == {"booking_id": "b1", "offering_id": "e1", "status": "CONFIRMED", "version": 3,
                            "at": "2031-01-01T00:00:00Z"}
    assert "alice" not in json.dumps(body)
    assert rules.fact_id(dict(fact)) == event_id != rules.fact_id({**fact, "version": 4})


# ------------------------------------------------------------------------------ the service

class Store:
    def __init__(self) -> None:
        self.webhooks: dict[tuple[str, str], dict[str, Any]] = {}
        self.deliveries: dict[tuple[str, str], dict[str, Any]] = {}

    def add_webhook(self, organizer_id, webhook, most):
        if sum(1 for o, _ in self.webhooks if o == organizer_id) >= most:
            return False
        self.webhooks[(organizer_id, webhook["webhook_id"])] = dict(webhook)
        return True

    def list_webhooks(self, organizer_id):
        return [dict(w) for (o, _), w in self.webhooks.items() if o == organizer_id]

    def get_webhook(self, organizer_id, webhook_id):
        found = self.webhooks.get((organizer_id, webhook_id))
        return dict(found) if found else None

    def delete_webhook(self, organizer_id, webhook_id):
        return self.webhooks.pop((organizer_id, webhook_id), None) is not None

    def add_delivery(self, delivery):
        key = (delivery["webhook_id"], delivery["delivery_id"])
        if key in self.deliveries:
            return False
        self.deliveries[key] = json.loads(json.dumps(delivery))
        return True

    def get_delivery(self, webhook_id, delivery_id):
        found = self.deliveries.get((webhook_id, delivery_id))
        return json.loads(json.dumps(found)) if found else None

    def update_delivery(self, webhook_id, delivery_id, generation, changes):
        found = self.deliveries.get((webhook_id, delivery_id))
        if not found or found["generation"] != generation:
            return False
        found.update(json.loads(json.dumps(changes)))
        return True

    def delivery_page(self, webhook_id, limit, after):
        found = sorted((d for (w, _), d in self.deliveries.items() if w == webhook_id),
                       key=lambda d: (d["created_at"], d["delivery_id"]), reverse=True)
        return found[:limit], None


class Offerings:
    def get_event(self, event_id, consistent=False):
        return {"event_id": event_id, "organizer_id": "org1"} if event_id.startswith("e") else None

    def event_cancelled(self, event_id):
        return False


class Queue:
    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], int]] = []

    def send(self, message, delay=0):
        self.sent.append((json.loads(json.dumps(message)), delay))


class Network:
    """Answers ``status`` (or raises when None); resolves names as ``names`` says at this moment."""

    def __init__(self) -> None:
        self.status: int | None = 200
        self.names: dict[str, list[str]] = {"hooks.example.com": ["93.184.216.34"]}
        self.posts: list[dict[str, Any]] = []

    def resolve(self, host, port):
        return list(self.names.get(host, []))

    def post(self, scheme, host, port, path, address, headers, body, timeout):
        self.posts.append({"address": address, "host": host, "headers": headers, "body": body})
        if self.status is None:
            raise ConnectionRefusedError("connection_refused")
        return self.status


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2031, 1, 1, tzinfo=timezone.utc)

    def __call__(self):
        return self.now


CALLER = Caller("org1", "key1", "main")


@pytest.fixture
def world():
    store, queue, net, clock = Store(), Queue(), Network(), Clock()
    service = WebhookService(store, Offerings(), clock, lambda: KEY, queue, net)
    return service, store, queue, net, clock


def run(service, queue, clock, until: float | None = None):
    """Work the queue as SQS would: each message at its delay, moving the clock to it."""
    outcomes = []
    while queue.sent:
        queue.sent.sort(key=lambda m: m[1])
        message, delay = queue.sent.pop(0)
        if until is not None and clock.now.timestamp() + delay > until:
            queue.sent.append((message, delay))
            break
        clock.now += timedelta(seconds=delay)
        for other in queue.sent:
            other_delay = max(0, other[1] - delay)
            queue.sent[queue.sent.index(other)] = (other[0], other_delay)
        outcomes.append(service.attempt(message))
    return outcomes


def confirmed(booking="b1", version=2):
    return {"type": "booking.confirmed", "booking_id": booking, "event_id": "e1", "customer_id": "alice",
            "status": "CONFIRMED", "version": version, "at": "2031-01-01T00:00:00Z"}


def test_a_webhook_shows_its_secret_once_and_signs_each_delivery_with_it(world):
    service, store, queue, net, clock = world
    made = service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    assert made["secret"].startswith("whsec_")
    assert "secret" not in service.list(CALLER)[0] and "salt" not in service.list(CALLER)[0]
    assert made["secret"] not in json.dumps(list(store.webhooks.values()))   # a salt is stored, never the secret
    assert service.publish(confirmed()) == 1
    assert run(service, queue, clock) == ["delivered"]
    post = net.posts[0]
    assert post["address"] == "93.184.216.34" and post["host"] == "hooks.example.com"
    assert rules.verify(made["secret"], post["headers"]["Holdfast-Signature"], post["body"], clock.now.timestamp())
    assert post["headers"]["Holdfast-Event-Type"] == "order.confirmed"
    assert json.loads(post["body"])["data"]["booking_id"] == "b1"


def test_a_repeated_fact_makes_no_second_delivery_and_an_unchosen_one_none(world):
    service, store, queue, net, clock = world
    service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    assert service.publish(confirmed()) == 1
    run(service, queue, clock)
    assert service.publish(confirmed()) == 0
    assert service.publish({**confirmed(), "type": "booking.held"}) == 0
    assert service.publish({**confirmed(), "type": "booking.cancelled", "version": 3}) == 0
    assert len(net.posts) == 1


def test_a_receivers_500_is_retried_with_backoff_until_it_answers(world):
    service, store, queue, net, clock = world
    hook = service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    net.status = 500
    service.publish(confirmed())
    start = clock.now
    assert run(service, queue, clock, until=start.timestamp() + 3600) == ["retrying"] * 5
    net.status = 204
    outcomes = run(service, queue, clock)
    assert outcomes[-1] == "delivered" and "delivered" not in outcomes[:-1]
    ids = {p["headers"]["Holdfast-Delivery-Id"] for p in net.posts}
    assert len(ids) == 1 and len(net.posts) == 6
    shown = service.deliveries(CALLER, hook["webhook_id"])["deliveries"][0]
    assert shown["status"] == "delivered" and shown["attempts"] == 6 and shown["last_attempt"]["status_code"] == 204


def test_after_24_hours_of_failures_the_delivery_is_failed_and_redelivered_by_hand(world):
    service, store, queue, net, clock = world
    hook = service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    net.status = None
    service.publish(confirmed())
    start = clock.now
    outcomes = run(service, queue, clock)
    assert outcomes[-1] == "failed" and clock.now - start <= timedelta(hours=24)
    shown = service.deliveries(CALLER, hook["webhook_id"])["deliveries"][0]
    assert shown["status"] == "failed" and shown["last_attempt"]["error"] == "connection_refused"
    net.status = 200
    again = service.redeliver(CALLER, hook["webhook_id"], shown["delivery_id"])
    assert again["status"] == "pending"
    assert run(service, queue, clock) == ["delivered"]
    assert net.posts[-1]["headers"]["Holdfast-Delivery-Id"] == shown["delivery_id"]
    with pytest.raises(NotFound):
        service.redeliver(CALLER, hook["webhook_id"], "dlv_nope")


def test_a_redelivery_while_retrying_leaves_one_chain_of_attempts(world):
    service, store, queue, net, clock = world
    hook = service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    net.status = 503
    service.publish(confirmed())
    run(service, queue, clock, until=clock.now.timestamp() + 60)
    delivery_id = next(iter(store.deliveries))[1]
    net.status = 200
    service.redeliver(CALLER, hook["webhook_id"], delivery_id)
    assert sorted(run(service, queue, clock)) == ["delivered", "stale"]


def test_a_name_that_turns_to_an_inner_address_after_registration_is_not_contacted(world):
    """DNS rebinding: the name was public when registered; at the attempt it answers the cloud's
    metadata address, so nothing is sent and the attempt fails."""
    service, store, queue, net, clock = world
    hook = service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    net.names["hooks.example.com"] = ["93.184.216.34", "169.254.169.254"]
    service.publish(confirmed())
    assert run(service, queue, clock, until=clock.now.timestamp() + 1) == ["retrying"]
    assert net.posts == []
    shown = service.deliveries(CALLER, hook["webhook_id"])["deliveries"][0]
    assert shown["last_attempt"]["error"] == "address_not_public"


def test_a_deleted_endpoints_waiting_deliveries_are_dropped(world):
    service, store, queue, net, clock = world
    hook = service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    service.publish(confirmed())
    service.delete(CALLER, hook["webhook_id"])
    assert run(service, queue, clock) == ["dropped"] and net.posts == []
    with pytest.raises(NotFound):
        service.delete(CALLER, hook["webhook_id"])


def test_the_test_route_delivers_a_signed_webhook_test_event(world):
    service, store, queue, net, clock = world
    hook = service.create(CALLER, "https://hooks.example.com/in", ["order.cancelled"])
    answer = service.test(CALLER, hook["webhook_id"])
    assert run(service, queue, clock) == ["delivered"]
    body = json.loads(net.posts[0]["body"])
    assert body["type"] == "webhook.test" and body["id"] == answer["event_id"]
    with pytest.raises(NotFound):
        service.test(Caller("org2", "key9"), hook["webhook_id"])


def test_an_organizer_has_at_most_ten_endpoints(world):
    service = world[0]
    for _ in range(rules.MAX_WEBHOOKS):
        service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    with pytest.raises(Conflict) as refused:
        service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    assert refused.value.code == "too_many_webhooks"


def test_a_fact_of_another_organizers_offering_reaches_none_of_these_endpoints(world):
    service, store, queue, net, clock = world
    service.create(CALLER, "https://hooks.example.com/in", ["order.confirmed"])
    assert service.publish({**confirmed(), "event_id": "x-other"}) == 0


def test_local_networks_are_parsed_as_networks():
    assert rules.parse_networks(" 127.0.0.0/8, ::1/128 ") == (ipaddress.ip_network("127.0.0.0/8"),
                                                               ipaddress.ip_network("::1/128"))


def test_a_transfer_and_an_exchange_are_delivered_as_their_own_events_without_the_customer(world):
    service, store, queue, net, clock = world
    service.create(CALLER, "https://hooks.example.com/in", ["order.transferred", "order.exchanged"])
    transferred = {**confirmed(version=5), "type": "booking.transferred", "customer_id": "bob"}
    exchanged = {**confirmed(version=6), "type": "booking.exchanged", "released_event_id": "e0"}
    assert service.publish(transferred) == 1 and service.publish(exchanged) == 1
    assert service.publish(confirmed()) == 0   # not chosen
    assert run(service, queue, clock) == ["delivered", "delivered"]
    assert service.publish(exchanged) == 0 and not queue.sent   # the bus repeats a fact: one delivery
    bodies = [json.loads(post["body"]) for post in net.posts]
    assert [b["type"] for b in bodies] == ["order.transferred", "order.exchanged"]
    assert bodies[1]["data"]["released_event_id"] == "e0" and bodies[1]["data"]["offering_id"] == "e1"
    assert all("customer_id" not in b["data"] for b in bodies)
