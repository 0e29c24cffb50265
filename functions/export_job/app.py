"""Export jobs: a message of the export jobs queue names one job (``POST /organizers/me/exports``);
its CSV file is written to the exports bucket and the job marked ready (services/export_jobs.py).

A job that raised returns to its queue (partial batch) and ends in the queue's dead-letter queue
after a few receives (EXPORT_JOB_RECEIVES, the queue's maxReceiveCount); its last receive records
the job ``failed`` (``export_failed``) before raising, so it never stays ``running``. Each receive
first notes on the job its number and when Lambda ends this invocation at the latest (its remaining
time), so a last attempt ended from outside (timeout, out of memory) is read as ``failed``
(``export_interrupted``) once that moment has passed. A job that cannot be done (its key deleted,
its offering gone) is recorded as failed, with a code, and is no error of this function."""
import json

from holdfast import wiring
from holdfast.config import settings
from holdfast.observability import log_metrics, logger, tracer
from holdfast.entry.sqs_batch import SqsMessage, process_batch

wiring.cold_start()


@tracer.capture_method
def handle_record(record: SqsMessage, context) -> None:
    message = json.loads(record.body)
    last = record.receive_count >= settings().export_job_receives
    outcome = wiring.export_jobs().run(message["organizer_id"], message["export_id"], last_attempt=last,
                                       attempt=record.receive_count,
                                       seconds_left=context.get_remaining_time_in_millis() / 1000)
    logger.info("export job", extra={"export_id": message["export_id"], "outcome": outcome})


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@log_metrics
def lambda_handler(event, context):
    return process_batch(event, lambda record: handle_record(record, context))
