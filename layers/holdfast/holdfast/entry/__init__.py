"""What the handlers share at their entry: the API resolver and its error mapping (http, resolver), SQS
batches with partial failure (sqs_batch) and the webhook's notification check (provider_notification)."""
