"""One logger, tracer and metrics object for every function (service name from POWERTOOLS_SERVICE_NAME)."""
from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
tracer = Tracer()
metrics = Metrics()
