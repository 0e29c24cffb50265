"""The deploy steps (docs/deploy.md, which the README links), checked as far as they run offline:
the same `sam` commands, from the SAM CLI the Makefile pins (its own venv, .venv-sam)."""
from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from tests.parity import build
from tests.support.handlers import REPO

pytestmark = pytest.mark.timeout(300)

# need an AWS account: what the test cannot run
NEEDS_AWS = (("aws",), ("sam", "deploy"))


def _deploy_commands() -> list[list[str]]:
    guide = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = guide.split("## Deploying to AWS", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block, "the deploy section has a sh block"
    text = block.group(1).replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in text.splitlines() if shlex.split(line, comments=True)]


def test_the_offline_deploy_steps_are_sam_validate_and_sam_build():
    offline = [c for c in _deploy_commands() if not any(c[:len(p)] == list(p) for p in NEEDS_AWS)]
    assert offline == [["sam", "validate", "--lint"], ["sam", "build"]]


def test_make_test_runs_sam_validate_lint_on_the_template_once():
    """`sam validate --lint` runs in make test's setup (the Makefile's `sam-validate`, beside the lint
    and the parity build), not again in pytest: what make would run, without running it."""
    plan = subprocess.run(["make", "-n", "-o", ".venv-sam/.installed", "sam-validate"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout
    assert re.search(r"^env SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=\S+ \.venv-sam/bin/sam validate --lint "
                     r"--template-file template\.yaml$", plan, re.M), plan
    prerequisites = subprocess.run(["make", "-n", "-p", "-o", ".venv-sam/.installed", "sam-validate"],
                                   cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert re.search(r"^test: .*\bsam-validate\b", prerequisites, re.M), "make test does not run sam-validate"


def test_sam_build_builds_every_function_and_the_layer():
    # the guide's `sam build` (for this machine's architecture: the cached build of the parity test)
    built = build.build()
    sam_template = (built / "template.yaml").read_text()
    for name in ("HoldfastLayer", "BookingsApiFunction", "PaymentWebhookFunction", "NotifierFunction"):
        assert (built / name).is_dir() and name in sam_template
    layer = built / "HoldfastLayer" / "python"
    for package in ("holdfast", "aws_lambda_powertools", "aws_xray_sdk", "pydantic", "yookassa", "boto3"):
        assert (layer / package).is_dir(), f"the layer lacks {package}"
