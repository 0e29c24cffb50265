"""The cost profile's arithmetic (devstack/measure/costs.py): the quiet shape charges each execution once,
however many containers asked for it, and the busy shape shares a bucket's tasks with its bookings."""
from __future__ import annotations

from devstack.measure import costs


def record(function, calls, bucket_task=False, route=None):
    return {"function": function, "route": route, "calls": calls, "cpu": 0.002, "wall": 0.01, "memory_mb": 256,
            "bucket_task": bucket_task}


def start(name):
    return {"service": "stepfunctions", "op": "StartExecution", "execution_name": name, "wall": 0, "cpu": 0}


QUERY = {"service": "dynamodb", "op": "Query", "rcu": 0.5, "wall": 0, "cpu": 0}


def test_an_execution_two_containers_asked_for_is_charged_once():
    records = [record("BookingsApiFunction", [start("exp-20300101T120005")], route="POST /events/{event_id}/bookings"),
               record("BookingsApiFunction", [start("exp-20300101T120005")], route="POST /events/{event_id}/bookings"),
               record("BookingsApiFunction", [start("pay-b-1-initial")], route="POST /bookings/{booking_id}/payment")]
    quiet = costs.quiet_shape(records, bookings=2)
    assert quiet["transitions"] == costs.TRANSITIONS_EXPIRY_TICK + costs.TRANSITIONS_PER_EXECUTION
    assert quiet["executions"] == {"exp": 1, "pay": 1}
    assert quiet["usd_per_1000_step_functions"] == round(
        quiet["transitions"] * costs.PRICES["step_functions_standard_per_1000_transitions"] / 2, 4)


def test_a_bucket_s_tasks_are_shared_by_its_bookings_under_load():
    alone = [record("BookingsApiFunction", [], route="POST /events/{event_id}/bookings")]
    with_tick = alone + [record("ExpireHoldFunction", [QUERY] * 64, bucket_task=True)]
    ops = {"a": costs.summarise_op([alone]), "b": costs.summarise_op([with_tick])}
    assert ops["a"]["bucket_task_usd_per_million"] == 0 and ops["b"]["bucket_task_usd_per_million"] > 0
    per_op = {name: costs.price(op) for name, op in ops.items()}
    shared = costs.at_load(ops | {"hold (new, 201)": ops["b"], "payment start": ops["a"]}, per_op | {
        "hold (new, 201)": per_op["b"], "payment start": per_op["a"]}, ["b"])
    # the tick's 64 queries and its invocation, spread over the bucket's bookings
    assert shared["usd_per_1000_completed_bookings"] < round(per_op["b"] * 1000, 4)
    assert abs(shared["usd_per_1000_completed_bookings"] - round(per_op["a"] * 1000, 4)) < 1e-4
