"""The door mode's plan (devstack/measure/bench_doors.py): the offered scans are rate x duration, every
ticket is scanned first once, a share a second time after the first, and every repeat of a pass id
comes after the sending it repeats; the bare yardstick's scan has no version check on a fresh key."""
import argparse
import random

from devstack.measure.bench_doors import DoorRun, bare_shape, passed


def test_the_schedule_orders_each_ticket_s_scans():
    args = argparse.Namespace(rate=30.0, duration=10.0, double_share=0.2, tickets=100, timeout=5, workers=4, seed=1)
    tickets = [{"ticket_id": f"t{n}", "token": f"token-{n}"} for n in range(100)]
    scans = DoorRun("http://127.0.0.1:9", "http://127.0.0.1:9", args).schedule(tickets, random.Random(1))
    assert len(scans) == 300
    kinds = [s["kind"] for s in scans]
    assert kinds.count("first") == 100 and kinds.count("second") == 20 and kinds.count("repeat") == 180
    first_at = {s["ticket"]: i for i, s in enumerate(scans) if s["kind"] == "first"}
    assert all(first_at[s["ticket"]] < i for i, s in enumerate(scans) if s["kind"] == "second")
    sent_at = {}
    for i, scan in enumerate(scans):
        if scan["kind"] == "repeat":
            assert scan["pass_id"] in sent_at and scan["token"] == tickets[scan["ticket"]]["token"]
        else:
            assert scan["pass_id"] not in sent_at
            sent_at[scan["pass_id"]] = i


def test_the_bare_scan_keeps_its_writes_without_the_version_check():
    sample = {"TransactItems": [
        {"Put": {"TableName": "t", "Item": {"pk": {"S": "BOOKING#b"}, "sk": {"S": "META"}, "version": {"N": "3"}},
                 "ConditionExpression": "#version = :expected", "ExpressionAttributeNames": {"#version": "version"},
                 "ExpressionAttributeValues": {":expected": {"N": "2"}}}},
        {"Update": {"TableName": "t", "Key": {"pk": {"S": "X#b"}, "sk": {"S": "META"}},
                    "UpdateExpression": "SET #d = :d", "ConditionExpression": "#s = :v",
                    "ExpressionAttributeNames": {"#d": "kind_details", "#s": "status"},
                    "ExpressionAttributeValues": {":d": {"S": "x"}, ":v": {"N": "2"}}}},
        {"Put": {"TableName": "t", "Item": {"pk": {"S": "CHECKINS#e"}, "sk": {"S": "T#1"}},
                 "ConditionExpression": "attribute_not_exists(pk)"}}]}
    shaped = bare_shape(sample)
    booking, update, checkin = (next(iter(item.values())) for item in shaped["TransactItems"])
    assert "ConditionExpression" not in booking and "ExpressionAttributeValues" not in booking
    assert booking["Item"] == sample["TransactItems"][0]["Put"]["Item"]
    assert "ConditionExpression" not in update and update["ExpressionAttributeNames"] == {"#d": "kind_details"}
    assert update["ExpressionAttributeValues"] == {":d": {"S": "x"}}
    assert shaped["TransactItems"][2] == sample["TransactItems"][2]


def test_a_ticket_admitted_twice_fails_the_run():
    good = {"unanswered": 0, "admitted_twice": 0, "repeat_answers_differing": 0, "429_without_retry_after": 0,
            "checked_in_by_the_api": 5, "admitted_tickets": 5}
    assert passed(good) and not passed({**good, "admitted_twice": 1}) and not passed({**good, "unanswered": 1})
