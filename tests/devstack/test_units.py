"""Pieces of the local stack that need no emulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devstack.aws.apigw import compile_route
from devstack.aws.pollers import matches_pattern, record_passes
from devstack.aws.template import Resolver, creation_order, load_template, resolve_parameters

REPO_ROOT = Path(__file__).resolve().parents[2]

OUTBOX = json.loads('{"eventName": ["INSERT"], "dynamodb": {"Keys": {"sk": {"S": [{"prefix": "OUTBOX#"}]}}}}')


def _stream_record(event_name, sk):
    return {"eventName": event_name, "dynamodb": {"Keys": {"pk": {"S": "B#1"}, "sk": {"S": sk}}}}


def test_outbox_filter_of_the_template():
    assert matches_pattern(OUTBOX, _stream_record("INSERT", "OUTBOX#1"))
    assert not matches_pattern(OUTBOX, _stream_record("MODIFY", "OUTBOX#1"))
    assert not matches_pattern(OUTBOX, _stream_record("INSERT", "BOOKING#1"))
    assert not matches_pattern(OUTBOX, {"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"S": "x"}}}})
    assert record_passes([], _stream_record("REMOVE", "x"))
    assert record_passes([OUTBOX, {"eventName": ["REMOVE"]}], _stream_record("REMOVE", "x"))


def test_other_filter_operators():
    record = {"body": {"kind": "payment.succeeded", "amount": 150, "tags": ["a", "b"]}}
    assert matches_pattern({"body": {"kind": [{"suffix": ".succeeded"}]}}, record)
    assert matches_pattern({"body": {"kind": [{"anything-but": ["refund.succeeded"]}]}}, record)
    assert matches_pattern({"body": {"amount": [{"numeric": [">", 100, "<=", 150]}]}}, record)
    assert not matches_pattern({"body": {"amount": [{"numeric": [">", 150]}]}}, record)
    assert matches_pattern({"body": {"missing": [{"exists": False}]}}, record)
    assert matches_pattern({"body": {"tags": ["b"]}}, record)
    assert matches_pattern({"body": {"kind": [{"equals-ignore-case": "PAYMENT.SUCCEEDED"}]}}, record)


def test_route_templates():
    pattern, _ = compile_route("/events/{event_id}/bookings")
    assert pattern.match("/events/e-1/bookings").groupdict() == {"event_id": "e-1"}
    assert not pattern.match("/events/e-1/bookings/x")
    assert not pattern.match("/events//bookings")
    greedy, _ = compile_route("/files/{path+}")
    assert greedy.match("/files/a/b/c").groupdict() == {"path": "a/b/c"}


def test_resolver_intrinsics():
    r = Resolver({"Stage": "v1", "Nets": ["a", "b"]},
                 {"AWS::Region": "eu-central-1", "AWS::AccountId": "123456789012", "AWS::StackName": "s"})
    r.refs["Queue"] = "https://q"
    r.attributes["Fn"] = {"Arn": "arn:fn"}
    assert r.resolve({"Fn::Sub": "${AWS::StackName}-x.fifo"}) == "s-x.fifo"
    assert r.resolve({"Fn::Sub": "${Fn.Arn}/${Stage}/${!Literal}"}) == "arn:fn/v1/${Literal}"
    assert r.resolve({"Fn::Sub": ["${A}-${Queue}", {"A": {"Ref": "Stage"}}]}) == "v1-https://q"
    assert r.resolve({"Fn::Join": [",", {"Ref": "Nets"}]}) == "a,b"
    assert r.resolve({"Fn::GetAtt": ["Fn", "Arn"]}) == "arn:fn"
    assert r.resolve({"Fn::Select": [1, {"Fn::Split": ["/", "x/y/z"]}]}) == "y"
    assert r.resolve({"List": ["a", {"Ref": "AWS::NoValue"}]}) == {"List": ["a"]}



def test_an_if_that_chooses_no_value_removes_what_holds_it():
    r = Resolver({"Reserved": "0"}, {}, {"Reserves": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Reserved"}, "0"]}]}})
    chosen = {"Fn::If": ["Reserves", {"Ref": "Reserved"}, {"Ref": "AWS::NoValue"}]}
    assert r.resolve({"Timeout": 60, "ReservedConcurrentExecutions": chosen}) == {"Timeout": 60}
    assert r.resolve({"List": ["a", chosen]}) == {"List": ["a"]}


def test_parameters_and_order_of_the_real_template():
    template = load_template(REPO_ROOT / "template.yaml")
    with pytest.raises(ValueError, match="ProviderShopId"):
        resolve_parameters(template, {})
    values = resolve_parameters(template, {"ProviderShopId": "1", "AllowedWebhookNetworks": "127.0.0.1/32"})
    assert values["AllowedWebhookNetworks"] == ["127.0.0.1/32"]
    assert values["DefaultHoldTtlSeconds"] == "600"
    with pytest.raises(ValueError, match="CustomerIdentitySource"):
        resolve_parameters(template, {"ProviderShopId": "1", "CustomerIdentitySource": "cookie"})
    order = creation_order(template["Resources"])
    assert order.index("PaymentEventsDeadLetterQueue") < order.index("PaymentEventsQueue")


def test_the_api_stand_in_serves_the_web_pages_only_where_no_route_matches(tmp_path):
    import http.client

    from devstack.aws.apigw import ApiGatewayServer

    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<h1>home</h1>")
    (web / "app.js").write_text("let x = 1;")
    (tmp_path / "secret.txt").write_text("outside the folder")
    server = ApiGatewayServer([], port=0, static_dir=web)
    server.start()
    try:
        def get(path, method="GET"):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            connection.request(method, path)
            answer = connection.getresponse()
            return answer.status, answer.getheader("Content-Type"), answer.read()

        assert get("/") == (200, "text/html; charset=utf-8", b"<h1>home</h1>")
        status, kind, body = get("/app.js")
        assert status == 200 and "javascript" in kind and body == b"let x = 1;"
        for outside in ("/../secret.txt", "/%2e%2e/secret.txt", "/nope.html"):
            status, kind, body = get(outside)
            assert status == 404 and json.loads(body)["error"]["code"] == "route_not_found", outside
        assert get("/index.html", "POST")[0] == 404      # pages are read-only
    finally:
        server.stop()
