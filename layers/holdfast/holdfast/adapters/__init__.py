"""Adapters to the outside: DynamoDB, the payment provider, Step Functions, SQS, Secrets Manager."""
