"""The infrastructure scanner `make lint` runs: checkov (its own venv, pinned in pyproject.toml's
`checkov` extra) scans template.yaml and edge-web-acl.yaml there, offline, and fails `make lint` on
a failed check (tests/contract/test_makefile.py checks that `make test` runs it; it is not run a
second time here). Every check it skips is listed once in .checkov.yaml with the reason written
above it."""
from __future__ import annotations

import re

import yaml

from tests.support.handlers import REPO

CONFIG = REPO / ".checkov.yaml"


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
