"""Export jobs (services/export_jobs.py) over in-memory fakes: a job is checked before it is
queued, made once per Idempotency-Key, run once however often its message comes, fails with a code
when its key was deleted, offers a link that never outlives its file, and says ``expired`` after."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from holdfast.domain.errors import IdempotencyKeyReused, InvalidRequest, NotFound
from holdfast.domain.organizers import Caller
from holdfast.services.export_jobs import ExportJobService

CALLER = Caller("org1", "key1", "Accounts")


class Exports:
    def __init__(self) -> None:
        self.runs = 0

    def check(self, caller, export, offering, since, until):
        if export != "sales":
            raise NotFound("No export.", code="export_not_found")

    def whole(self, caller, export, offering, since, until):
        self.runs += 1
        return {"text": "\ufeffbooking_id\r\nb1\r\n", "rows": 1}


class Jobs:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict] = {}

    def add_job(self, organizer_id, job, ttl):
        if (organizer_id, job["export_id"]) in self.items:
            return False
        self.items[(organizer_id, job["export_id"])] = dict(job)
        return True

    def get_job(self, organizer_id, export_id):
        found = self.items.get((organizer_id, export_id))
        return dict(found) if found else None

    def job_page(self, organizer_id, limit, after):
        listed = sorted((f"{job['created_at']}#{job['export_id']}", job) for (org, _), job in self.items.items()
                        if org == organizer_id)[::-1]
        listed = [(position, job) for position, job in listed if after is None or position < after]
        shown = listed[:limit]
        return [dict(job) for _, job in shown], (shown[-1][0] if len(listed) > limit else None)

    def finish_job(self, organizer_id, export_id, changes):
        found = self.items.get((organizer_id, export_id))
        if not found or found["status"] != "running":
            return False
        found.update(changes)
        return True

    def note_running(self, organizer_id, export_id, facts):
        return self.finish_job(organizer_id, export_id, facts)


class Files:
    def __init__(self) -> None:
        self.put_calls: list[tuple[str, bytes]] = []
        self.links: list[tuple[str, int]] = []

    def put(self, key, body, filename):
        self.put_calls.append((key, body))

    def link(self, key, seconds):
        self.links.append((key, seconds))
        return f"https://files.example/{key}?expires={seconds}"


class Queue:
    def __init__(self) -> None:
        self.sent: list[dict] = []

    def send(self, message):
        self.sent.append(dict(message))


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2031, 1, 1, tzinfo=timezone.utc)

    def __call__(self):
        return self.now


@pytest.fixture
def world():
    keys = [{"key_id": "key1", "name": "Accounts", "scopes": ["exports"]}]
    exports, jobs, files, queue, clock = Exports(), Jobs(), Files(), Queue(), Clock()
    service = ExportJobService(exports, jobs, lambda organizer: list(keys), queue, files, clock, "s" * 16,
                               link_seconds=900, retention_days=1)
    return service, exports, jobs, files, queue, clock, keys


def test_a_job_is_made_once_per_key_run_once_and_its_link_lasts_the_configured_seconds(world):
    service, exports, jobs, files, queue, clock, _ = world
    job, replayed = service.start(CALLER, "k-1", "sales", None, "2031-01-01", None)
    assert (job["status"], replayed, len(queue.sent)) == ("running", False, 1)
    again, replayed = service.start(CALLER, "k-1", "sales", None, "2031-01-01", None)
    assert again["export_id"] == job["export_id"] and replayed is True
    with pytest.raises(IdempotencyKeyReused):
        service.start(CALLER, "k-1", "sales", None, None, None)
    message = queue.sent[0]
    assert service.run(message["organizer_id"], message["export_id"]) == "ready"
    assert service.run(message["organizer_id"], message["export_id"]) == "done before"   # a repeated message
    assert exports.runs == 1 and len(files.put_calls) == 1
    shown = service.view(CALLER, job["export_id"])
    assert (shown["status"], shown["rows"]) == ("ready", 1)
    assert files.links[-1] == (files.put_calls[0][0], 900)
    assert shown["download_expires_at"] == "2031-01-01T00:15:00.000Z"


def test_a_link_never_outlives_its_file_and_a_gone_file_is_expired(world):
    service, _, _, files, queue, clock, _ = world
    job, _ = service.start(CALLER, "k-2", "sales", None, None, None)
    service.run("org1", job["export_id"])
    clock.now += timedelta(days=1) - timedelta(seconds=100)
    shown = service.view(CALLER, job["export_id"])
    assert files.links[-1][1] == 100 and "download_url" in shown
    clock.now += timedelta(seconds=100)
    shown = service.view(CALLER, job["export_id"])
    assert shown["status"] == "expired" and "download_url" not in shown


def test_a_job_whose_key_was_deleted_fails_with_a_code_and_writes_no_file(world):
    service, exports, _, files, _, _, keys = world
    job, _ = service.start(CALLER, "k-3", "sales", None, None, None)
    keys.clear()
    assert service.run("org1", job["export_id"]) == "failed"
    shown = service.view(CALLER, job["export_id"])
    assert shown["status"] == "failed" and shown["error"]["code"] == "key_deleted"
    assert files.put_calls == [] and exports.runs == 0


def test_a_bad_request_queues_nothing_and_a_limited_key_sees_only_its_own_jobs(world):
    service, _, _, _, queue, _, _ = world
    with pytest.raises(NotFound):
        service.start(CALLER, "k-4", "tickets", None, None, None)
    assert queue.sent == []
    job, _ = service.start(CALLER, "k-5", "sales", None, None, None)
    limited = Caller("org1", "key2", "One event", scopes=frozenset({"exports"}), offerings=frozenset({"e1"}))
    with pytest.raises(NotFound) as hidden:
        service.view(limited, job["export_id"])
    assert hidden.value.code == "export_job_not_found"
    with pytest.raises(NotFound):
        service.view(Caller("org2", "key9"), job["export_id"])


class Breaking(Exports):
    """An export whose reading raises, as a store outage or a bug would."""

    def whole(self, caller, export, offering, since, until):
        self.runs += 1
        raise RuntimeError("the store went away")


def test_a_job_failing_on_its_last_attempt_is_recorded_failed_with_a_reason_and_still_raises(world):
    service, _, jobs, files, queue, clock, keys = world
    service.exports = Breaking()
    job, _ = service.start(CALLER, "k-6", "sales", None, None, None)
    for _ in range(2):   # the first receives: back to the queue, still running
        with pytest.raises(RuntimeError):
            service.run("org1", job["export_id"])
        assert service.view(CALLER, job["export_id"])["status"] == "running"
    with pytest.raises(RuntimeError):   # the last: recorded, and raised for the dead-letter queue
        service.run("org1", job["export_id"], last_attempt=True)
    shown = service.view(CALLER, job["export_id"])
    assert shown["status"] == "failed" and shown["error"]["code"] == "export_failed"
    assert shown["finished_at"] == "2031-01-01T00:00:00.000Z" and files.put_calls == []
    # a message seen again after that (a redrive by hand) changes nothing
    assert service.run("org1", job["export_id"], last_attempt=True) == "done before"


def test_a_job_that_succeeds_on_its_last_attempt_is_ready(world):
    service, _, _, files, _, _, _ = world
    job, _ = service.start(CALLER, "k-7", "sales", None, None, None)
    assert service.run("org1", job["export_id"], last_attempt=True) == "ready"
    assert service.view(CALLER, job["export_id"])["status"] == "ready" and len(files.put_calls) == 1


def test_the_jobs_are_listed_newest_first_a_page_at_a_time_and_a_limited_key_sees_its_own(world):
    service, _, _, _, _, clock, keys = world
    made = []
    for n in range(3):
        made.append(service.start(CALLER, f"k-list-{n}", "sales", None, None, None)[0]["export_id"])
        clock.now += timedelta(minutes=1)
    limited = Caller("org1", "key2", "One event", scopes=frozenset({"exports"}), offerings=frozenset({"e1"}))
    theirs = service.start(limited, "k-list-x", "sales", None, None, None)[0]["export_id"]
    service.run("org1", made[0])
    first = service.page(CALLER, limit=2)
    assert [job["export_id"] for job in first["exports"]] == [theirs, made[2]]
    second = service.page(CALLER, limit=2, cursor=first["next_cursor"])
    assert [job["export_id"] for job in second["exports"]] == [made[1], made[0]]
    assert second["next_cursor"] is None
    assert second["exports"][1]["status"] == "ready" and "download_url" in second["exports"][1]
    assert [job["export_id"] for job in service.page(limited)["exports"]] == [theirs]
    assert service.page(Caller("org2", "key9"))["exports"] == []
    with pytest.raises(InvalidRequest) as refused:   # another organizer's cursor
        service.page(Caller("org2", "key9"), cursor=first["next_cursor"])
    assert refused.value.code == "invalid_cursor"


class Killed(Files):
    """A file write during which Lambda ends the function (its timeout, out of memory): nothing
    of the job's code runs after it, its own error handling included."""

    def put(self, key, body, filename):
        from holdfast.faults import InjectedKill

        raise InjectedKill("export_job.before_file")


def test_a_last_attempt_ended_from_outside_reads_failed_once_its_invocation_is_over(world):
    """Timeout or out of memory on each receive: ``except Exception`` never runs, so nothing is
    recorded at the end; each attempt noted at its start when Lambda ends it, and a reading after
    the last one's end records ``export_interrupted`` once (not before: it may still be running)."""
    from holdfast.faults import InjectedKill

    service, _, jobs, _, _, clock, _ = world
    service.files = Killed()
    job, _ = service.start(CALLER, "k-8", "sales", None, None, None)
    for attempt in (1, 2):   # an earlier receive ended from outside: the queue hands it out again
        with pytest.raises(InjectedKill):
            service.run("org1", job["export_id"], attempt=attempt, seconds_left=300)
        clock.now += timedelta(seconds=1801)
        assert service.view(CALLER, job["export_id"])["status"] == "running"
    with pytest.raises(InjectedKill):
        service.run("org1", job["export_id"], last_attempt=True, attempt=3, seconds_left=299.5)
    clock.now += timedelta(seconds=299)
    assert service.view(CALLER, job["export_id"])["status"] == "running"   # the invocation may still run
    clock.now += timedelta(seconds=10)
    shown = service.view(CALLER, job["export_id"])
    assert shown["status"] == "failed" and shown["error"]["code"] == "export_interrupted"
    assert shown["finished_at"] == "2031-01-01T01:05:11.000Z" and "download_url" not in shown
    clock.now += timedelta(minutes=5)
    assert service.page(CALLER)["exports"][0]["finished_at"] == shown["finished_at"]   # recorded once
    assert service.run("org1", job["export_id"], last_attempt=True, attempt=4, seconds_left=300) == "done before"


def test_a_last_attempt_that_finishes_keeps_its_outcome_after_its_end(world):
    service, _, _, files, _, clock, _ = world
    job, _ = service.start(CALLER, "k-9", "sales", None, None, None)
    assert service.run("org1", job["export_id"], last_attempt=True, attempt=3, seconds_left=300) == "ready"
    clock.now += timedelta(seconds=400)
    assert service.view(CALLER, job["export_id"])["status"] == "ready" and len(files.put_calls) == 1


def test_a_repeated_request_for_a_job_whose_last_attempt_was_ended_answers_it_failed_and_queues_nothing(world):
    from holdfast.faults import InjectedKill

    service, _, _, _, queue, clock, _ = world
    service.files = Killed()
    job, _ = service.start(CALLER, "k-10", "sales", None, None, None)
    with pytest.raises(InjectedKill):
        service.run("org1", job["export_id"], last_attempt=True, attempt=3, seconds_left=300)
    clock.now += timedelta(seconds=306)
    again, replayed = service.start(CALLER, "k-10", "sales", None, None, None)
    assert replayed and again["status"] == "failed" and again["error"]["code"] == "export_interrupted"
    assert len(queue.sent) == 1


def test_a_job_whose_message_can_no_longer_come_reads_failed_even_with_no_attempt_noted(world):
    """An attempt that dies before it notes itself (at its cold start) leaves nothing on the job:
    once the queue can no longer hand its message out (``give_up_seconds`` after it was queued:
    retention plus the function's timeout) a reading records ``export_interrupted``; a repeated
    request that queued it again counts from then."""
    service, _, _, _, queue, clock, _ = world
    service.give_up_seconds = 86_700
    job, _ = service.start(CALLER, "k-11", "sales", None, None, None)
    clock.now += timedelta(seconds=80_000)
    again, _ = service.start(CALLER, "k-11", "sales", None, None, None)   # queued again now
    assert again["status"] == "running" and len(queue.sent) == 2
    clock.now += timedelta(seconds=86_700)
    assert service.view(CALLER, job["export_id"])["status"] == "running"   # within the new message's life
    clock.now += timedelta(seconds=6)
    shown = service.view(CALLER, job["export_id"])
    assert shown["status"] == "failed" and shown["error"]["code"] == "export_interrupted"
    other, _ = service.start(CALLER, "k-12", "sales", None, None, None)
    assert service.run("org1", other["export_id"]) == "ready"
    clock.now += timedelta(days=2)
    later = service.view(CALLER, other["export_id"])   # an outcome is never judged again: its file expired
    assert later["status"] == "expired" and "error" not in later
