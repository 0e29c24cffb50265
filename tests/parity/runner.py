"""One warm Lambda execution environment, as close to python3.12 on AWS as this machine allows.

Started by the parity test as `python3.12 -S -I runner.py`: no site-packages, no PYTHON*
variables, no script directory on sys.path. The parent passes one JSON line with the paths (the
built function, the built layer's python/ and the runtime's own boto3) and then one JSON line
per invocation; each answer is one JSON line on the protocol pipe. Whatever the handler prints
(Powertools logs to stdout) goes to stderr, as it would go to CloudWatch.

Only the standard library is imported before sys.path is set: anything else would come from
the wrong place.
"""
import importlib
import json
import os
import sys
import time
import traceback
import uuid


class Context:
    """The attributes and method of the Python runtime's context object."""

    def __init__(self, timeout_s):
        env = os.environ
        self.function_name = env["AWS_LAMBDA_FUNCTION_NAME"]
        self.function_version = env.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.invoked_function_arn = env["HOLDFAST_PARITY_FUNCTION_ARN"]
        self.memory_limit_in_mb = int(env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = env["AWS_LAMBDA_LOG_GROUP_NAME"]
        self.log_stream_name = env["AWS_LAMBDA_LOG_STREAM_NAME"]
        self.identity = None
        self.client_context = None
        self._deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _record_calls(calls):
    """Every AWS call the function makes: (IAM service prefix, action, request parameters)."""
    import botocore.client

    original = botocore.client.BaseClient._make_api_call

    def recording(self, operation_name, api_params):
        calls.append({"service": self.meta.service_model.signing_name, "action": operation_name,
                      "params": json.loads(json.dumps(api_params, default=str))})
        return original(self, operation_name, api_params)

    botocore.client.BaseClient._make_api_call = recording
    return botocore.__file__


def main():
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    setup = json.loads(sys.stdin.readline())
    # Lambda's order: the function (/var/task), the layer (/opt/python), the runtime's packages
    # (/var/runtime), then the standard library.
    sys.path[:0] = [setup["task_root"], setup["layer_python"], setup["runtime_sdk"]]
    # AWS does not promise a system time-zone database in the runtime image: zone names must
    # resolve from what the build ships (the layer's tzdata), so this host's one is hidden.
    import zoneinfo

    zoneinfo.reset_tzpath(to=[])
    calls = []
    started = time.monotonic()
    try:
        botocore_file = _record_calls(calls)
        module_name, _, attribute = os.environ["_HANDLER"].rpartition(".")
        handler = getattr(importlib.import_module(module_name), attribute)
    except BaseException as exc:  # noqa: BLE001 - the runtime reports Runtime.ImportModuleError
        protocol.write(json.dumps({"ready": False, "errorType": type(exc).__name__,
                                   "errorMessage": str(exc), "trace": traceback.format_exc()}) + "\n")
        return 1
    loaded = {name: getattr(sys.modules[name], "__file__", None) for name in
              ("boto3", "botocore", "aws_xray_sdk", "aws_lambda_powertools", "pydantic", "yookassa",
               "holdfast") if name in sys.modules}
    protocol.write(json.dumps({"ready": True, "init_seconds": time.monotonic() - started,
                               "sys_path": sys.path, "botocore": botocore_file, "modules": loaded,
                               "calls": list(calls)}, default=str) + "\n")
    timeout_s = float(setup["timeout"])
    for line in sys.stdin:
        event = json.loads(line)
        calls.clear()
        os.environ["_X_AMZN_TRACE_ID"] = (f"Root=1-{int(time.time()):08x}-{uuid.uuid4().hex[:24]};"
                                          f"Parent={uuid.uuid4().hex[:16]};Sampled=1")
        try:
            result = handler(event, Context(timeout_s))
            answer = {"result": result}
        except Exception as exc:  # noqa: BLE001 - shaped like the runtime's error payload
            answer = {"errorType": type(exc).__name__, "errorMessage": str(exc),
                      "trace": traceback.format_exc()}
        answer["calls"] = list(calls)
        protocol.write(json.dumps(answer, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
