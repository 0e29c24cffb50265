"""Outbox relay: each booking change event streamed from the table becomes one customer
notification, recorded once even when the stream delivers it twice."""
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from holdfast import wiring
from holdfast.observability import logger, tracer
from holdfast.services.notifications import record_outbox_event

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


@tracer.capture_method
def handle_record(record: DynamoDBRecord) -> None:
    image = record.dynamodb.new_image if record.dynamodb else None
    if not image:
        return
    recorded = record_outbox_event(wiring.store(), image)
    logger.info("outbox event", extra={"type": image.get("type"), "recorded": recorded})


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event, context):
    return process_partial_response(event=event, record_handler=handle_record, processor=processor, context=context)
