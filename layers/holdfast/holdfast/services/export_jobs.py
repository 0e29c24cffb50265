"""Exports as a job (docs/api.md, "Exports as a job"): an export too large to page through, or any
export an organizer wants as one file, is written by a job to a private bucket and downloaded
through a presigned link that expires.

``start`` checks the request as a page would (404/400 before anything is queued), stores the job
and queues it; ``run`` (the export job function, from the queue) writes the file and records the
outcome once; ``view`` answers the job's status and, once its file is written, a fresh link.

A job runs with the rights of the key that asked for it, read again when it runs (a key's grant
never changes, but a key can be deleted: its job then fails with ``key_deleted``).

A job never stays ``running`` for good. An attempt that raises is retried by the queue, and its
last one records ``export_failed`` before raising. An attempt that is ended from outside (Lambda's
timeout, out of memory: none of this code runs on the way out) cannot record anything then, so
each attempt notes when it began that it is the queue's last (or not) and the moment Lambda ends it
at the latest (``attempt_ends_at``: the invocation's own remaining time); a reading of a job whose
last attempt is past that moment and still ``running`` records it ``failed`` with
``export_interrupted`` (a conditional write: a job that finished meanwhile keeps its outcome). So
does a reading ``give_up_seconds`` after the job's message was queued (the queue's message
retention plus the function's timeout): no attempt of it can come any more, whether or not one was
noted (an attempt may die before noting itself, at its cold start, say)."""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable

from ..clock import epoch_seconds, iso, parse_iso
from ..domain.errors import Forbidden, IdempotencyKeyReused, NotFound
from ..domain.ids import created_id
from ..domain.organizers import Caller
from ..domain.scopes import EXPORTS
from ..faults import crash_point
from ..ports import ExportFiles, ExportJobQueue, ExportJobStore
from .exports import ExportService
from .listing import decode_cursor, encode_cursor, page_limit

#: jobs a page of ``GET /organizers/me/exports``, at most and by default
JOB_PAGE_SIZE = 50

#: a job's item stays readable this long after its file is gone (its status then says ``expired``)
JOB_RECORD_EXTRA_DAYS = 7

#: how long after its attempt's end a job still running is taken for interrupted: the clocks of
#: the function that noted the end and of the one reading it may differ by this much
ATTEMPT_END_MARGIN_SECONDS = 5


class ExportJobService:
    def __init__(self, exports: ExportService, jobs: ExportJobStore, keys: Callable[[str], list[dict[str, Any]]],
                 queue: ExportJobQueue | None, files: ExportFiles | None, clock: Callable[[], Any], salt: str,
                 link_seconds: int, retention_days: int, give_up_seconds: int | None = None) -> None:
        self.exports = exports
        self.jobs = jobs
        self.keys = keys                  # an organizer's keys (OrganizerDirectory.organizer_keys)
        self.queue = queue
        self.files = files
        self.clock = clock
        self.salt = salt
        self.link_seconds = link_seconds
        self.retention_days = retention_days
        # past this long after its message was queued no receive of it can come (the queue's
        # MessageRetentionPeriod and the function's Timeout): None, never judged so
        self.give_up_seconds = give_up_seconds

    # ------------------------------------------------------------------ the organizer's request
    def start(self, caller: Caller, idempotency_key: str, export: str, offering: str | None, since: str | None,
              until: str | None) -> tuple[dict[str, Any], bool]:
        """The job for this request (made and queued, or the one this Idempotency-Key made before)
        and whether it was replayed; 422 ``idempotency_key_reused`` for the key with another request."""
        self.exports.check(caller, export, offering, since, until)
        export_id = "exp_" + created_id(self.salt, "export-job", caller.scoped(idempotency_key)).replace("-", "")
        asked = {"export": export, "offering": offering, "from": since, "to": until}
        now = self.clock()
        job = {"export_id": export_id, **{k: v for k, v in asked.items() if v is not None},
               "organizer_id": caller.organizer_id, "key_id": caller.key_id, "status": "running",
               "created_at": iso(now)}
        ttl = int(epoch_seconds()) + (self.retention_days + JOB_RECORD_EXTRA_DAYS) * 86_400
        if not self.jobs.add_job(caller.organizer_id, job, ttl):
            earlier = self.jobs.get_job(caller.organizer_id, export_id)
            if earlier is None or any(earlier.get(k) != v for k, v in asked.items()):
                raise IdempotencyKeyReused()
            earlier = self._ended(earlier)   # a job whose last attempt was ended is not queued again
            # the first request may have stopped between its write and its message: queue it again
            # (a job that ran already ignores a second message), noting when (its new message's life)
            if earlier.get("status") == "running":
                self.jobs.note_running(caller.organizer_id, export_id, {"queued_at": iso(now)})
                self._queue().send({"organizer_id": caller.organizer_id, "export_id": export_id})
            return self._view(earlier), True
        self._queue().send({"organizer_id": caller.organizer_id, "export_id": export_id})
        return self._view(job), False

    def _queue(self) -> ExportJobQueue:
        if self.queue is None:
            raise RuntimeError("EXPORT_JOBS_QUEUE_URL is not set: this function cannot queue export jobs")
        return self.queue

    def view(self, caller: Caller, export_id: str) -> dict[str, Any]:
        job = self.jobs.get_job(caller.organizer_id, export_id)
        # a key limited to some offerings sees only its own jobs: another key's file may hold more
        if job is None or (caller.offerings is not None and job.get("key_id") != caller.key_id):
            raise NotFound(f"No export job {export_id}.", code="export_job_not_found")
        return self._view(job)

    def page(self, caller: Caller, limit: int | str | None = None, cursor: str | None = None) -> dict[str, Any]:
        """The organizer's jobs, newest first (``GET /organizers/me/exports``), each as its reading
        shows it: ``exports`` and ``next_cursor`` (None on the last page). A key limited to some
        offerings sees only its own jobs, so its page may hold fewer than ``limit``."""
        size = page_limit(limit, JOB_PAGE_SIZE)
        partition = f"EXPORTJOBS#{caller.organizer_id}"
        after = decode_cursor(cursor, partition, "", "\uffff")["sk"] if cursor else None
        jobs, following = self.jobs.job_page(caller.organizer_id, size, after)
        shown = [self._view(job) for job in jobs
                 if caller.offerings is None or job.get("key_id") == caller.key_id]
        return {"exports": shown, "next_cursor": encode_cursor(partition, following) if following else None}

    def _view(self, job: dict[str, Any]) -> dict[str, Any]:
        job = self._ended(job)
        shown = {k: job.get(k) for k in ("export_id", "export", "offering", "from", "to", "status", "rows",
                                        "created_at", "finished_at", "file_expires_at", "error")}
        shown = {k: v for k, v in shown.items() if v is not None}
        if job.get("status") != "ready":
            return shown
        now = self.clock()
        if now >= parse_iso(job["file_expires_at"]):
            return {**shown, "status": "expired"}
        # a link is made at each reading, valid link_seconds (never beyond the file itself)
        seconds = min(self.link_seconds, int((parse_iso(job["file_expires_at"]) - now).total_seconds()))
        assert self.files is not None, "the function that shows jobs is given the bucket"
        return {**shown, "download_url": self.files.link(job["file_key"], max(1, seconds)),
                "download_expires_at": iso(now + timedelta(seconds=max(1, seconds)))}

    def _ended(self, job: dict[str, Any]) -> dict[str, Any]:
        """The job as it stands: one still ``running`` whose last attempt is past the moment Lambda
        ends it is recorded ``failed`` (``export_interrupted``) and answered so; the stored outcome
        when another one landed first."""
        if job.get("status") != "running":
            return job
        now, margin = self.clock(), timedelta(seconds=ATTEMPT_END_MARGIN_SECONDS)
        last_ended = bool(job.get("last_attempt") and job.get("attempt_ends_at")
                          and now >= parse_iso(job["attempt_ends_at"]) + margin)
        # no attempt noted, or not its last, and its message can no longer be received (it died
        # before noting one, say at its cold start, or the message is gone)
        queued = parse_iso(job.get("queued_at") or job["created_at"])
        message_gone = self.give_up_seconds is not None and now >= queued + timedelta(seconds=self.give_up_seconds) + margin
        if not (last_ended or message_gone):
            return job   # an attempt may still be running, or one may still come
        self._fail(job, "export_interrupted",
                   "The export stopped without finishing (its function ran out of time or memory); "
                   "ask for it again with a narrower filter (an offering, from, to), or ask the platform's "
                   "operators if it stops again.")
        return self.jobs.get_job(job["organizer_id"], job["export_id"]) or job

    # ------------------------------------------------------------------ the job itself
    def run(self, organizer_id: str, export_id: str, last_attempt: bool = False, attempt: int = 1,
            seconds_left: float | None = None) -> str:
        """Write the job's file and record it; what happened (``ready``, ``failed``, or ``done
        before`` for a repeated message). An error returns the message to its queue to be tried
        again; on the ``last_attempt`` (the queue's final receive before its dead-letter queue) the
        job is first recorded ``failed`` (``export_failed``), so its reading never stays
        ``running``, and the error still raises (the dead-letter queue and its alarm see it).

        ``attempt`` is the queue's receive count and ``seconds_left`` the invocation's remaining
        time (Lambda ends it then at the latest): both are noted on the job first, so a reading
        after an attempt that was ended from outside knows it (``_ended``)."""
        if seconds_left is not None:
            ends_at = self.clock() + timedelta(seconds=max(0.0, seconds_left))
            self.jobs.note_running(organizer_id, export_id, {
                "attempt": attempt, "attempt_ends_at": iso(ends_at), "last_attempt": last_attempt})
        try:
            return self._run(organizer_id, export_id)
        except Exception:
            if last_attempt:
                job = self.jobs.get_job(organizer_id, export_id)
                if job is not None and job.get("status") == "running":
                    self._fail(job, "export_failed",
                               "The export failed on every attempt; ask for it again, or ask the platform's "
                               "operators if it fails again.")
            raise

    def _run(self, organizer_id: str, export_id: str) -> str:
        job = self.jobs.get_job(organizer_id, export_id)
        if job is None or job.get("status") != "running":
            return "done before"
        key = next((k for k in self.keys(organizer_id) if k["key_id"] == job["key_id"]), None)
        if key is None:
            return self._fail(job, "key_deleted", "The key that asked for this export was deleted.")
        caller = Caller(organizer_id=organizer_id, key_id=key["key_id"], key_name=key.get("name"),
                        scopes=frozenset(key["scopes"]) if "scopes" in key else None,
                        offerings=frozenset(key["offerings"]) if "offerings" in key else None)
        try:
            caller.require(EXPORTS)
            whole = self.exports.whole(caller, job["export"], job.get("offering"), job.get("from"), job.get("to"))
        except (NotFound, Forbidden) as exc:   # the offering went away, or the key's rights did
            return self._fail(job, exc.code, str(exc))
        crash_point("export_job.before_file")   # the function dies with the rows read, no file written
        file_key = f"{organizer_id}/{export_id}/{job['export']}.csv"
        assert self.files is not None, "the export job function is given the bucket"
        self.files.put(file_key, whole["text"].encode("utf-8"), f"{job['export']}.csv")
        now = self.clock()
        self.jobs.finish_job(organizer_id, export_id, {
            "status": "ready", "rows": whole["rows"], "file_key": file_key, "finished_at": iso(now),
            "file_expires_at": iso(now + timedelta(days=self.retention_days))})
        return "ready"

    def _fail(self, job: dict[str, Any], code: str, message: str) -> str:
        self.jobs.finish_job(job["organizer_id"], job["export_id"], {
            "status": "failed", "error": {"code": code, "message": message}, "finished_at": iso(self.clock())})
        return "failed"
