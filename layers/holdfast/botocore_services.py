"""The AWS services the layer's code builds clients for, and the build step that keeps only their
models in the layer's botocore (layers/holdfast/Makefile; docs/performance.md, issue 49).

botocore ships the models of every AWS service (449 of them, 28 MB), and the first client a
process builds pays for that: it lists every service's directory to check the name it was given,
and parses ``endpoints.json`` (1.25 MB: every service's endpoints in every partition) for the
legacy endpoint resolver. That is most of the first client's CPU, and every function builds one
at its start or on its first call. The layer keeps the models of the services below and, in
``endpoints.json``, those services' entries; the pinned botocore is otherwise untouched.

Each kept ``service-2`` model is then written without its ``documentation`` texts, as plain JSON
(``strip_documentation``): every client parses its service's model whole (into ``OrderedDict``s),
and the texts are four fifths of it (DynamoDB's 556 KB is 113 KB without them). botocore reads
them only to write the docstrings of a client's methods (``help(client.put_item)``); the
``documentation`` of a ``clientContextParams`` entry, which botocore reads as it builds an S3
client, is kept.

``tests/contract/test_botocore_services.py`` holds the layer's code to the list (a client of a
service not kept would fail with ``UnknownServiceError``), ``tests/parity/test_bytecode.py`` the
build to the pruning. Run as ``python botocore_services.py <the layer's python directory>``.
"""
from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

#: every service a ``client("...")`` of the layer names (holdfast/adapters, holdfast/tools)
USED = ("dynamodb", "events", "logs", "s3", "secretsmanager", "sesv2", "sqs", "stepfunctions")
#: the services botocore's own credential providers build clients for (assumed roles, SSO profiles)
CREDENTIALS = ("sts", "sso", "sso-oidc")
KEPT = USED + CREDENTIALS


def _model(service_dir: Path) -> dict:
    """The newest service-2 model of a service directory (plain or gzipped JSON)."""
    version = sorted(p for p in service_dir.iterdir() if p.is_dir() and any(p.glob("service-2.json*")))[-1]
    path = next(version.glob("service-2.json*"))
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


def _without_documentation(node: object, *, keep: bool = False) -> object:
    if isinstance(node, dict):
        return {key: _without_documentation(value, keep=key == "clientContextParams" or (keep and isinstance(value, dict)))
                for key, value in node.items()
                if keep or key not in ("documentation", "documentationUrl") or not isinstance(value, str)}
    if isinstance(node, list):
        return [_without_documentation(value) for value in node]
    return node


def strip_documentation(data: Path) -> tuple[int, int]:
    """Rewrite every ``service-2`` model under ``data`` without its documentation texts, as plain
    JSON in place of the gzipped file (botocore looks for ``.json`` first; the texts gone, gzip
    would only add a decompression to every client); returns (bytes before, bytes after) parsed."""
    before = after = 0
    for path in sorted(data.glob("*/*/service-2.json*")):
        raw = path.read_bytes()
        text = gzip.decompress(raw) if path.suffix == ".gz" else raw
        stripped = json.dumps(_without_documentation(json.loads(text)), separators=(",", ":")).encode()
        before, after = before + len(text), after + len(stripped)
        path.unlink()
        (path.parent / "service-2.json").write_bytes(stripped)
    return before, after


def prune(python_dir: Path) -> tuple[int, int]:
    """Keep only ``KEPT``'s models in ``python_dir``/botocore/data and their entries in its
    ``endpoints.json``; returns (service directories removed, endpoint entries kept)."""
    data = python_dir / "botocore" / "data"
    missing = [name for name in KEPT if not (data / name).is_dir()]
    if missing:
        raise SystemExit(f"botocore in {data} has no model for {missing}")
    removed = 0
    for entry in data.iterdir():
        if entry.is_dir() and entry.name not in KEPT:
            shutil.rmtree(entry)
            removed += 1
    # endpoints.json names services by their endpoint prefix (stepfunctions is "states", sesv2 "email")
    prefixes = {name: _model(data / name)["metadata"].get("endpointPrefix", name) for name in KEPT}
    endpoints_path = data / "endpoints.json"
    endpoints = json.loads(endpoints_path.read_text(encoding="utf-8"))
    kept = 0
    for partition in endpoints["partitions"]:
        partition["services"] = {name: entry for name, entry in partition["services"].items()
                                 if name in prefixes.values()}
        kept += len(partition["services"])
    endpoints_path.write_text(json.dumps(endpoints, separators=(",", ":")), encoding="utf-8")
    strip_documentation(data)
    return removed, kept


if __name__ == "__main__":
    removed_dirs, kept_entries = prune(Path(sys.argv[1]))
    print(f"botocore: {removed_dirs} service models removed, {len(KEPT)} kept ({kept_entries} endpoint entries)")
