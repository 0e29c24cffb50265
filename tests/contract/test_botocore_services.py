"""The layer's botocore keeps the models of the services the layer calls, and only those
(layers/holdfast/botocore_services.py): a client of a service it dropped would fail with
UnknownServiceError on Lambda, while the dev venv's full botocore would hide it in every other test."""
from __future__ import annotations

import ast
import importlib.util

from tests.support.handlers import REPO


def _services_module():
    spec = importlib.util.spec_from_file_location("botocore_services", REPO / "layers/holdfast/botocore_services.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _named_clients() -> dict[str, set[str]]:
    """service -> the files whose code builds its client: ``boto3.client("x")``, ``aws_client("x", ...)``
    (the operators' CLI), ``client("x")`` of a session; a name that is not a literal is refused."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "layers/holdfast/holdfast").rglob("*.py")) + sorted((REPO / "functions").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # the CLI's aws_client(service, ...) builds the client its callers name (checked at them)
        passing = {id(call) for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and fn.name == "aws_client"
                   for call in ast.walk(fn) if isinstance(call, ast.Call)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or id(node) in passing:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name not in ("client", "aws_client") or not node.args:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.setdefault(first.value, set()).add(str(path.relative_to(REPO)))
            else:
                raise AssertionError(
                    f"{path.relative_to(REPO)}:{node.lineno}: a client whose service is not named where it is built")
    return found


def test_the_layer_keeps_the_model_of_every_service_it_builds_a_client_for():
    services = _services_module()
    used = _named_clients()
    assert set(used) <= set(services.USED), {name: files for name, files in used.items() if name not in services.USED}
    # and keeps no model nobody calls: the list shrinks with the code
    assert set(services.USED) == set(used), sorted(set(services.USED) - set(used))
    assert not set(services.USED) & set(services.CREDENTIALS)


def test_pruning_keeps_the_listed_models_and_their_endpoints(tmp_path):
    import botocore

    services = _services_module()
    data = tmp_path / "botocore" / "data"
    source = __import__("pathlib").Path(botocore.__file__).parent / "data"
    data.mkdir(parents=True)
    import shutil

    for entry in source.iterdir():   # the dev venv's botocore: the kept, three dropped, the shared files
        if entry.is_file():
            shutil.copy(entry, data / entry.name)
        elif entry.name in services.KEPT or entry.name in ("ec2", "lambda", "kinesis"):
            shutil.copytree(entry, data / entry.name)
    removed, kept = services.prune(tmp_path)
    assert removed == 3
    assert sorted(p.name for p in data.iterdir() if p.is_dir()) == sorted(services.KEPT)
    import json

    endpoints = json.loads((data / "endpoints.json").read_text())
    aws = next(p for p in endpoints["partitions"] if p["partition"] == "aws")
    assert {"dynamodb", "states", "email", "secretsmanager"} <= set(aws["services"]) and "ec2" not in aws["services"]
    assert kept >= len(aws["services"])

    # a client of a kept service builds and resolves its endpoint from the pruned data
    import botocore.session

    session = botocore.session.get_session()
    session.set_config_variable("data_path", str(data))
    loader = session.get_component("data_loader")
    loader.search_paths.clear()
    loader.search_paths.append(str(data))
    client = session.create_client("stepfunctions", region_name="eu-central-1", aws_access_key_id="k",
                                   aws_secret_access_key="s")
    assert client.meta.endpoint_url == "https://states.eu-central-1.amazonaws.com"
    # what a loader that searches the pruned data alone lists (a session's own loader may also carry
    # paths an earlier test of the same process added, so it is not asked)
    from botocore.loaders import Loader

    alone = Loader(extra_search_paths=[str(data)], include_default_search_paths=False)
    assert sorted(alone.list_available_services("service-2")) == sorted(services.KEPT)


def test_the_kept_models_are_written_without_their_documentation(tmp_path):
    """Every client parses its service's whole model; the texts botocore reads only for docstrings
    are four fifths of it. What a client does with the model is unchanged: the same operations, the
    same shapes and members, S3's context parameters (whose documentation botocore does read)."""
    import json
    import shutil

    import botocore
    from botocore.loaders import Loader

    services = _services_module()
    source = __import__("pathlib").Path(botocore.__file__).parent / "data"
    data = tmp_path / "data"
    for name in ("dynamodb", "s3", "stepfunctions"):
        shutil.copytree(source / name, data / name)
    full = Loader(extra_search_paths=[str(data)], include_default_search_paths=False)
    before = {name: full.load_service_model(name, "service-2") for name in ("dynamodb", "s3", "stepfunctions")}
    parsed_before, parsed_after = services.strip_documentation(data)
    assert parsed_after < parsed_before / 3
    assert not list(data.glob("*/*/service-2.json.gz")) and len(list(data.glob("*/*/service-2.json"))) >= 3

    def without_docs(node):
        if isinstance(node, dict):
            return {k: without_docs(v) for k, v in node.items()
                    if k not in ("documentation", "documentationUrl") or not isinstance(v, str)}
        return [without_docs(v) for v in node] if isinstance(node, list) else node

    fresh = Loader(extra_search_paths=[str(data)], include_default_search_paths=False)
    for name, model in before.items():
        after = fresh.load_service_model(name, "service-2")
        assert "documentation" not in json.dumps(after["operations"])
        if name == "s3":   # read as an S3 client is built
            assert after["clientContextParams"] == model["clientContextParams"]
            assert all(p["documentation"] for p in after["clientContextParams"].values())
            continue
        assert after == without_docs(model)
    from botocore.model import ServiceModel

    # the model object a client is built on (client.meta.service_model), from the stripped copy alone
    # (in an xdist worker a session's own loader also searched the full data and found the texts)
    model = ServiceModel(fresh.load_service_model("dynamodb", "service-2"), service_name="dynamodb")
    assert model.operation_model("TransactWriteItems").input_shape.members["TransactItems"]
    assert model.operation_model("TransactWriteItems").documentation == ""
