"""The infrastructure scanner `make lint` runs: checkov (its own venv, pinned in pyproject.toml's
`checkov` extra) finds no failed check in template.yaml and edge-web-acl.yaml, offline, and every check it skips is
listed once in .checkov.yaml with the reason written above it."""
from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from tests.support.handlers import REPO

CHECKOV = REPO / ".venv-checkov" / "bin" / "checkov"
CONFIG = REPO / ".checkov.yaml"


def test_checkov_finds_no_failed_check_in_the_templates():
    if not CHECKOV.exists():
        pytest.fail("checkov is not installed: `make lint` (or `make test`) creates .venv-checkov", pytrace=False)
    done = subprocess.run([str(CHECKOV), "--config-file", str(CONFIG), "--file", "template.yaml",
                           "--file", "edge-web-acl.yaml"],
                          cwd=REPO, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Passed checks: [1-9]\d*, Failed checks: 0,", done.stdout), done.stdout
    # offline: the scan must not try to reach Prisma Cloud for guidelines
    assert "prismacloud" not in done.stderr, done.stderr


def test_every_skipped_check_is_listed_once_with_its_reason():
    settings = yaml.safe_load(CONFIG.read_text())
    skipped = settings["skip-check"]
    assert len(skipped) == len(set(skipped))
    lines = CONFIG.read_text().splitlines()
    for check in skipped:
        assert re.fullmatch(r"CKV_AWS_\d+", check), check
        at = lines.index(f"  - {check}")
        reason = []
        for line in reversed(lines[:at]):
            if line.startswith("  # "):
                reason.append(line)
            elif line.startswith("  - "):
                # several checks may share the reason written above the first of them
                continue
            else:
                break
        assert " ".join(reason).count(" ") >= 8, f"{check} is skipped without a reason"
    assert settings["skip-download"] is True
