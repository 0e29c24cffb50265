"""Issue 46's exports as a job, over HTTP on the local stack: POST /organizers/me/exports answers
202 with the job, the export job function writes the whole CSV to the (emulated) S3 bucket, and the
job's reading gives a presigned link that downloads exactly the export's rows; a repeated
Idempotency-Key is the same job; a limited key cannot see another key's job."""
from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlparse

import pytest
import requests

from tests.integration.test_doors_flow import ok, tickets_of
from tests.integration.test_exports import every_page
from tests.integration.test_organizers import new_organizer
from tests.integration.test_team_keys import key_of
from tests.support.api import BookingApi
from tests.support.flows import customer
from tests.support.template import template

pytestmark = pytest.mark.integration


def job_done(api, stack, export_id: str) -> dict:
    stack.wait_idle()
    return ok(api.request("GET", f"/organizers/me/exports/{export_id}", organizer=True))


def downloaded(url: str) -> tuple[bytes, list[dict[str, str]]]:
    answer = requests.get(url, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.content.startswith(b"\xef\xbb\xbf"), "the file starts with the UTF-8 byte order mark"
    return answer.content, list(csv.DictReader(io.StringIO(answer.content.decode("utf-8-sig"), newline="")))


def test_an_export_job_writes_the_whole_csv_and_its_link_downloads_exactly_the_confirmed_orders(api, sandbox, system):
    stack = system["stack"]
    event, other = api.create_event(capacity=10), api.create_event(capacity=5)
    first, _, _ = tickets_of(api, sandbox, event["event_id"], 2)
    second, _, _ = tickets_of(api, sandbox, event["event_id"], 1)
    tickets_of(api, sandbox, other["event_id"], 1)
    ok(api.book(event["event_id"], customer(), {"quantity": 1}), 201)   # a hold never paid is no order

    key = customer()
    started = api.request("POST", "/organizers/me/exports", organizer=True, key=key,
                          json={"export": "sales", "offering": event["event_id"]})
    job = ok(started, 202)
    assert started.headers["Idempotent-Replayed"] == "false"
    assert job["status"] == "running" and job["export"] == "sales" and job["export_id"].startswith("exp_")
    assert "download_url" not in job

    done = job_done(api, stack, job["export_id"])
    assert done["status"] == "ready", done
    assert done["rows"] == 2
    body, rows = downloaded(done["download_url"])
    assert sorted(row["booking_id"] for row in rows) == sorted([first, second])
    # the same rows, in the same order, as the pages of GET /admin/exports/sales.csv
    assert rows == every_page(api, "/admin/exports/sales.csv", offering=event["event_id"])
    # the link is presigned and expires after the template's ExportLinkSeconds
    query = parse_qs(urlparse(done["download_url"]).query)
    assert query["X-Amz-Expires"] == [str(stack.parameters["ExportLinkSeconds"])]
    assert done["download_expires_at"] > done["finished_at"]

    # the same Idempotency-Key is the same job (not a second file); with another request a 422
    again = api.request("POST", "/organizers/me/exports", organizer=True, key=key,
                        json={"export": "sales", "offering": event["event_id"]})
    assert ok(again, 202)["export_id"] == job["export_id"] and again.headers["Idempotent-Replayed"] == "true"
    reused = api.request("POST", "/organizers/me/exports", organizer=True, key=key, json={"export": "attendees"})
    assert (reused.status_code, reused.json()["error"]["code"]) == (422, "idempotency_key_reused")

    # every offering, no filter: the other event's order is in the file too
    everything = ok(api.request("POST", "/organizers/me/exports", organizer=True, key=customer(),
                                json={"export": "sales"}), 202)
    whole = job_done(api, stack, everything["export_id"])
    _, all_rows = downloaded(whole["download_url"])
    assert {first, second} <= {row["booking_id"] for row in all_rows} and whole["rows"] == len(all_rows)


def test_export_jobs_refuse_bad_requests_with_a_code_and_hide_other_keys_jobs(api, system):
    stack = system["stack"]
    event = api.create_event(capacity=3)
    for body, status, code in [({"export": "tickets"}, 404, "export_not_found"),
                               ({"export": "sales", "from": "yesterday"}, 400, "invalid_time"),
                               ({"export": "sales", "offering": "no-such-offering"}, 404, "offering_not_found"),
                               ({"export": "sales", "extra": 1}, 400, None)]:
        answer = api.request("POST", "/organizers/me/exports", organizer=True, key=customer(), json=body)
        assert answer.status_code == status, (body, answer.text)
        assert code is None or answer.json()["error"]["code"] == code
    missing_key = api.request("POST", "/organizers/me/exports", organizer=True, json={"export": "sales"})
    assert (missing_key.status_code, missing_key.json()["error"]["code"]) == (400, "idempotency_key_missing")

    seller = key_of(api, name="Sales reader", scopes=["sales:read"])
    refused = seller.request("POST", "/organizers/me/exports", organizer=True, key=customer(), json={"export": "sales"})
    assert (refused.status_code, refused.json()["error"]["details"]) == (403, {"scope": "exports"})

    job = ok(api.request("POST", "/organizers/me/exports", organizer=True, key=customer(), json={"export": "sales"}), 202)
    stack.wait_idle()
    limited = key_of(api, name="One event's exports", scopes=["exports"], offerings=[event["event_id"]])
    hidden = limited.request("GET", f"/organizers/me/exports/{job['export_id']}", organizer=True)
    assert (hidden.status_code, hidden.json()["error"]["code"]) == (404, "export_job_not_found")
    stranger = api.__class__(api.base, organizer_key="local-organizer-key-2")
    theirs = stranger.request("GET", f"/organizers/me/exports/{job['export_id']}", organizer=True)
    assert (theirs.status_code, theirs.json()["error"]["code"]) == (404, "export_job_not_found")


def test_an_export_job_failing_on_every_attempt_ends_failed_and_the_list_shows_it_newest_first(
        api, system, monkeypatch):
    """The export job function dies after reading the rows, on every receive of the job's message
    (a crash point on the real path): after the queue's last receive the job reads ``failed`` with
    ``export_failed``, not ``running`` forever; GET /organizers/me/exports lists it first."""
    from holdfast import faults as crash_points

    stack = system["stack"]
    # an organizer of its own: each of the four runs of the job reads every offering the
    # organizer has, and the package's shared organizer has hundreds by the time this runs
    api = BookingApi(api.base, organizer_key=new_organizer(api, "Failing exports")["api_key"])
    api.create_event(capacity=2)
    earlier = ok(api.request("POST", "/organizers/me/exports", organizer=True, key=customer(),
                             json={"export": "attendees"}), 202)
    assert job_done(api, stack, earlier["export_id"])["status"] == "ready"

    crash_points.reset_crash_counts()
    monkeypatch.setenv("HOLDFAST_CRASH_POINTS", "export_job.before_file")
    job = ok(api.request("POST", "/organizers/me/exports", organizer=True, key=customer(),
                         json={"export": "sales"}), 202)
    stack.wait_idle()
    assert crash_points.crash_count("export_job.before_file") == 1
    assert job_done(api, stack, job["export_id"])["status"] == "running"   # back in its queue
    visibility = int(template()["Resources"]["ExportJobsQueue"]["Properties"]["VisibilityTimeout"])
    for attempt in (2, 3):   # the queue hands the message out again after its visibility timeout
        stack.advance_clock(visibility + 1)
        stack.wait_idle()
        assert crash_points.crash_count("export_job.before_file") == attempt
    failed = job_done(api, stack, job["export_id"])
    assert failed["status"] == "failed", failed
    assert failed["error"]["code"] == "export_failed" and "download_url" not in failed
    stack.advance_clock(visibility + 1)   # no fourth attempt: the message went to the dead-letter queue
    stack.wait_idle()
    assert crash_points.crash_count("export_job.before_file") == 3

    listed = ok(api.request("GET", "/organizers/me/exports", organizer=True, params={"limit": 1}))
    assert [entry["export_id"] for entry in listed["exports"]] == [job["export_id"]]
    assert listed["exports"][0]["status"] == "failed" and listed["next_cursor"]
    following = ok(api.request("GET", "/organizers/me/exports", organizer=True,
                               params={"limit": 1, "cursor": listed["next_cursor"]}))
    assert [entry["export_id"] for entry in following["exports"]] == [earlier["export_id"]]
    seller = key_of(api, name="Sales reader", scopes=["sales:read"])
    refused = seller.request("GET", "/organizers/me/exports", organizer=True)
    assert (refused.status_code, refused.json()["error"]["details"]) == (403, {"scope": "exports"})


def test_an_export_job_ended_from_outside_on_every_attempt_reads_failed_after_its_last_invocation(
        api, system, monkeypatch):
    """The export job function is ended after reading the rows on every receive, as Lambda ends it
    at its timeout or out of memory (a kill point on the real path: no ``except`` of the code runs,
    the stack's runtime reports the environment exited): after the queue's last receive the job is
    still ``running`` while that invocation could be, then ``failed`` with ``export_interrupted``
    once the function's Timeout has passed, not ``running`` forever."""
    from holdfast import faults as crash_points

    stack = system["stack"]
    api = BookingApi(api.base, organizer_key=new_organizer(api, "Interrupted exports")["api_key"])
    api.create_event(capacity=2)
    crash_points.reset_crash_counts()
    monkeypatch.setenv("HOLDFAST_KILL_POINTS", "export_job.before_file")
    job = ok(api.request("POST", "/organizers/me/exports", organizer=True, key=customer(),
                         json={"export": "sales"}), 202)
    stack.wait_idle()
    assert crash_points.crash_count("export_job.before_file") == 1
    resources = template()["Resources"]
    visibility = int(resources["ExportJobsQueue"]["Properties"]["VisibilityTimeout"])
    timeout = int(resources["ExportJobFunction"]["Properties"]["Timeout"])
    for attempt in (2, 3):
        assert job_done(api, stack, job["export_id"])["status"] == "running"   # back in its queue
        stack.advance_clock(visibility + 1)
        stack.wait_idle()
        assert crash_points.crash_count("export_job.before_file") == attempt
    still = job_done(api, stack, job["export_id"])
    assert still["status"] == "running", still   # the last invocation may still be running
    stack.advance_clock(timeout + 10)
    failed = job_done(api, stack, job["export_id"])
    assert failed["status"] == "failed", failed
    assert failed["error"]["code"] == "export_interrupted" and "download_url" not in failed
    listed = ok(api.request("GET", "/organizers/me/exports", organizer=True))
    assert [(entry["export_id"], entry["status"]) for entry in listed["exports"]] == [(job["export_id"], "failed")]
    stack.advance_clock(visibility + 1)   # no fourth attempt: the message went to the dead-letter queue
    stack.wait_idle()
    assert crash_points.crash_count("export_job.before_file") == 3
