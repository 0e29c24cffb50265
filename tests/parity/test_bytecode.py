"""The layer ships its bytecode (layers/holdfast/Makefile), and Lambda's interpreter uses it.

Lambda cannot write bytecode (/opt is read-only): a module without a usable .pyc in the layer is
compiled from source at every cold start, boto3's and botocore's included. The .pyc files must be
unchecked-hash: the zip Lambda unpacks keeps mtimes at 2-second resolution, so a timestamp-checked
one can be judged stale and recompiled at every start anyway.
"""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.parity import build
from tests.support.handlers import REPO
from tests.support.template import template

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def layer() -> Path:
    return build.build() / "HoldfastLayer" / "python"


def _compiled(pyc: Path) -> Path:
    """The source a __pycache__ file belongs to."""
    return pyc.parent.parent / (pyc.name.split(".")[0] + ".py")


def test_every_module_of_the_layer_ships_unchecked_bytecode_for_python312(layer):
    sources = sorted(layer.rglob("*.py"))
    assert len(sources) > 1000  # boto3, botocore, pydantic, yookassa, powertools, holdfast ...
    tag = sys.implementation.cache_tag  # cpython-312, the runtime's
    missing, wrong = [], []
    for source in sources:
        pyc = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        if not pyc.is_file():
            missing.append(source.relative_to(layer))
            continue
        header = pyc.read_bytes()[:8]
        if header[:4] != importlib.util.MAGIC_NUMBER or build.bytecode_flags(pyc) != build.UNCHECKED_HASH:
            wrong.append((str(pyc.relative_to(layer)), header.hex()))
    assert not missing, f"{len(missing)} modules without bytecode, e.g. {missing[:10]}"
    assert not wrong, f"{len(wrong)} .pyc files not unchecked-hash for this Python (header hex), e.g. {wrong[:10]}"
    # no bytecode for another interpreter or optimisation level, none without its source
    assert [p for p in layer.rglob("*.pyc") if not p.name.endswith(f".{tag}.pyc") or not _compiled(p).is_file()] == []


_COUNT_COMPILES = r"""
import _frozen_importlib_external as external, importlib, json, sys
sys.path[:0] = json.loads(sys.argv[1])
compiled = []
compile_source = external.SourceFileLoader.source_to_code
def counted(self, data, path, *args, **kwargs):  # reached only when no usable .pyc was found
    compiled.append(path)
    return compile_source(self, data, path, *args, **kwargs)
external.SourceFileLoader.source_to_code = counted
for name in json.loads(sys.argv[2]):
    importlib.import_module(name)
print(json.dumps({"compiled": compiled, "modules": len(sys.modules)}))
"""


def test_a_cold_interpreter_compiles_nothing_of_the_layer(layer):
    """As Lambda starts: no site-packages, no bytecode written, the layer before the runtime's SDK.
    What the heaviest functions import at their cold start comes from the shipped .pyc files."""
    modules = ["boto3", "botocore.session", "aws_lambda_powertools", "pydantic", "yookassa",
               "holdfast.wiring", "holdfast.adapters.aws", "holdfast.services.payments", "holdfast.schemas"]
    done = subprocess.run([sys.executable, "-S", "-I", "-B", "-c", _COUNT_COMPILES,
                           json.dumps([str(layer), str(build.runtime_sdk())]), json.dumps(modules)],
                          capture_output=True, text=True, timeout=300, cwd=str(layer))
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["modules"] > 500  # the imports did happen
    assert [path for path in answer["compiled"] if path.startswith(str(layer))] == []


def test_shipped_bytecode_is_used_whatever_the_sources_mtime_says(layer, tmp_path):
    """The zip's coarse mtimes: a source whose mtime and size no longer match still loads from its
    .pyc. Shown on a copy of the package with its source replaced by one that cannot run: a
    timestamp- or hash-checked .pyc would be judged stale and the replacement compiled and run."""
    shutil.copytree(layer / "holdfast", tmp_path / "holdfast")
    (tmp_path / "holdfast" / "__init__.py").write_text("raise SystemExit('compiled from source')\n")
    done = subprocess.run([sys.executable, "-S", "-I", "-B", "-c",
                           "import sys; sys.path.insert(0, sys.argv[1]); import holdfast; print(holdfast.__doc__[:8])",
                           str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert (done.returncode, done.stdout.strip()) == (0, "Holdfast"), done.stderr[-2000:]


def test_the_layer_is_built_for_the_template_s_architecture():
    """The Makefile cannot read the template: its default platform must be the one the template
    deploys (tests/parity/build.py overrides both for its local build)."""
    makefile = (REPO / "layers" / "holdfast" / "Makefile").read_text(encoding="utf-8")
    default = re.search(r"^LAYER_ARCHITECTURE \?= (\S+)$", makefile, re.MULTILINE)
    assert default, "layers/holdfast/Makefile sets LAYER_ARCHITECTURE ?= <architecture>"
    resources = template()["Resources"]
    layer = resources["HoldfastLayer"]
    assert layer["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": default.group(1)}
    assert layer["Properties"]["CompatibleArchitectures"] == [default.group(1)]
    assert template()["Globals"]["Function"]["Architectures"] == [default.group(1)]


_FIRST_CLIENTS = r"""
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
import boto3, botocore
session = boto3.session.Session(region_name="eu-central-1", aws_access_key_id="k", aws_secret_access_key="s")
urls = {name: session.client(name).meta.endpoint_url for name in json.loads(sys.argv[2])}
print(json.dumps({"botocore": botocore.__file__, "urls": urls,
                  "services": sorted(session.get_available_services())}))
"""


def test_the_layer_s_botocore_holds_the_models_of_the_services_the_layer_calls(layer):
    """layers/holdfast/botocore_services.py prunes the build: the interpreter Lambda starts loads the
    layer's botocore, knows only the kept services, and builds a client of each with its endpoint."""
    spec = importlib.util.spec_from_file_location("botocore_services", REPO / "layers/holdfast/botocore_services.py")
    services = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(services)
    done = subprocess.run([sys.executable, "-S", "-I", "-B", "-c", _FIRST_CLIENTS,
                           json.dumps([str(layer), str(build.runtime_sdk())]), json.dumps(list(services.KEPT))],
                          capture_output=True, text=True, timeout=120, cwd=str(layer))
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["botocore"].startswith(str(layer))
    assert answer["services"] == sorted(services.KEPT)
    assert answer["urls"]["stepfunctions"] == "https://states.eu-central-1.amazonaws.com"
    assert answer["urls"]["dynamodb"] == "https://dynamodb.eu-central-1.amazonaws.com"
    # the legacy endpoint data is cut to the kept services: a fraction of the 1.25 MB it was
    assert (layer / "botocore" / "data" / "endpoints.json").stat().st_size < 200_000
