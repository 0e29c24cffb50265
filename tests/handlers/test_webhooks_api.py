"""The webhook routes through the admin handler (moto's table, queue and secret): a new endpoint's
secret is shown once and never listed, stored nowhere but as a salt, and absent from the audit log
and the function's logs; bad URLs and events are 4xx with their codes; the test route queues an
attempt; deliveries and a redelivery of another organizer's endpoint are its 404."""
from __future__ import annotations

import json

import boto3

from tests.handlers.conftest import OTHER_KEY, REGION
from tests.handlers.test_scoped_keys import OWNER, admin, as_key, made_key

OTHER = {"X-Api-Key": OTHER_KEY}
URL = "https://hooks.example.com/in"


def create(headers=OWNER, **body):
    return admin("POST", "/organizers/me/webhooks", headers, {"url": URL, "events": ["order.confirmed"], **body})


def test_a_new_endpoints_secret_is_shown_once_and_kept_nowhere(handler_env, capsys):
    status, made = create(description="CRM")
    assert status == 201, made
    assert made["secret"].startswith("whsec_") and made["events"] == ["order.confirmed"]
    status, listed = admin("GET", "/organizers/me/webhooks", OWNER)
    assert status == 200 and [w["webhook_id"] for w in listed["webhooks"]] == [made["webhook_id"]]
    table = boto3.client("dynamodb", region_name=REGION).scan(TableName="handler-bookings")["Items"]
    status, audit = admin("GET", "/organizers/me/audit", OWNER)
    logs = capsys.readouterr()
    for place in (json.dumps(listed), json.dumps(table), json.dumps(audit), logs.out, logs.err):
        assert made["secret"] not in place
    assert made["webhook_id"] in json.dumps(audit)


def test_bad_urls_and_events_are_400s_with_their_codes(handler_env):
    for body, code in [({"url": "https://127.0.0.1/x"}, "webhook_url_not_public"),
                       ({"url": "https://[fe80::1]/x"}, "webhook_url_not_public"),
                       ({"url": "http://hooks.example.com/x"}, "webhook_url_invalid"),
                       ({"url": "https://u:p@hooks.example.com/x"}, "webhook_url_invalid"),
                       ({"events": ["order.shipped"]}, "unknown_webhook_event"),
                       ({"events": []}, "validation_error"),
                       ({"secret": "mine"}, "validation_error")]:
        status, answer = create(**body)
        assert (status, answer["error"]["code"]) == (400, code), body


def test_a_key_without_the_scope_is_refused(handler_env):
    doors = made_key(name="Door", scopes=["doors"])
    status, answer = create(as_key(doors))
    assert (status, answer["error"]["code"], answer["error"]["details"]) == (403, "scope_required", {"scope": "webhooks"})


def test_the_test_route_queues_one_attempt_and_lists_the_delivery(handler_env):
    _, made = create()
    params = {"webhook_id": made["webhook_id"]}
    status, queued = admin("POST", "/organizers/me/webhooks/{webhook_id}/test", OWNER, params=params)
    assert status == 202 and queued["delivery_id"].startswith("dlv_")
    messages = handler_env["sqs"].receive_message(QueueUrl=handler_env["webhook_attempts_url"],
                                                  MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"])["delivery_id"] for m in messages] == [queued["delivery_id"]]
    status, page = admin("GET", "/organizers/me/webhooks/{webhook_id}/deliveries", OWNER, params=params)
    assert status == 200 and [(d["delivery_id"], d["status"], d["type"]) for d in page["deliveries"]] == \
        [(queued["delivery_id"], "pending", "webhook.test")]


def test_another_organizers_endpoint_is_a_404(handler_env):
    _, made = create()
    params = {"webhook_id": made["webhook_id"]}
    for method, path, extra in [("GET", "/organizers/me/webhooks/{webhook_id}/deliveries", {}),
                                ("POST", "/organizers/me/webhooks/{webhook_id}/test", {}),
                                ("DELETE", "/organizers/me/webhooks/{webhook_id}", {}),
                                ("POST", "/organizers/me/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver",
                                 {"delivery_id": "dlv_x"})]:
        status, answer = admin(method, path, OTHER, params={**params, **extra})
        assert (status, answer["error"]["code"]) == (404, "webhook_not_found"), path
    status, answer = admin("POST", "/organizers/me/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", OWNER,
                           params={**params, "delivery_id": "dlv_x"})
    assert (status, answer["error"]["code"]) == (404, "delivery_not_found")
    status, answer = admin("GET", "/organizers/me/webhooks/{webhook_id}/deliveries", OWNER, params=params)
    assert status == 200


def test_an_organizer_has_at_most_ten_endpoints(handler_env):
    for _ in range(10):
        assert create()[0] == 201
    status, answer = create()
    assert (status, answer["error"]["code"]) == (409, "too_many_webhooks")
    _, listed = admin("GET", "/organizers/me/webhooks", OWNER)
    status, _ = admin("DELETE", "/organizers/me/webhooks/{webhook_id}", OWNER,
                      params={"webhook_id": listed["webhooks"][0]["webhook_id"]})
    assert status == 204 and create()[0] == 201
