"""What `make test` and `make help` promise runs: a target named in .PHONY or as a prerequisite
with no rule is something make skips without a word (that is how `lint`, and cfn-lint with it,
once vanished from `make test`)."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.handlers import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def _database(*variables: str) -> dict[str, dict]:
    """make's own reading of the Makefile (-p): each file it knows, its prerequisites, whether it
    has a recipe and whether it is phony. -n keeps the goal (help) from running anything."""
    out = subprocess.run(
        ["make", "-f", "Makefile", "-p", "-n", "-r", "-R", *variables, "help"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout
    files = out[out.index("\n# Files\n"):]
    entries: dict[str, dict] = {}
    for block in files.split("\n\n"):
        lines = [line for line in block.splitlines() if line]
        heads = [i for i, line in enumerate(lines) if re.match(r"^[^#\t\s][^:=]*:(?!=)", line)]
        if not heads:
            continue
        head = lines[heads[0]]
        target, _, prerequisites = head.partition(":")
        prerequisites = prerequisites.split("|")[0].split()
        entries[target.strip()] = {
            "not_a_target": any(line == "# Not a target:" for line in lines[: heads[0]]),
            "prerequisites": prerequisites,
            "recipe": any(line.startswith("#  recipe to execute") for line in lines),
            "phony": any("Phony target" in line for line in lines),
        }
    return entries


@pytest.mark.parametrize("variables", [(), ("INSTRUCTIONS=1",)], ids=["default", "INSTRUCTIONS=1"])
def test_every_phony_target_and_prerequisite_has_a_rule(variables):
    entries = _database(*variables)
    phony = set(entries[".PHONY"]["prerequisites"])
    named = phony | {p for name, e in entries.items() if not name.startswith(".") for p in e["prerequisites"]}
    missing = []
    for name in sorted(named):
        entry = entries.get(name, {})
        has_rule = entry.get("recipe") or entry.get("prerequisites")
        if name in phony and not has_rule:
            missing.append(f"{name} (phony, no rule)")
        elif name not in phony and not has_rule and not (REPO / name).exists():
            missing.append(f"{name} (no rule and no such file)")
    assert not missing, f"make would skip these silently: {missing}"


def test_make_test_runs_lint_and_lint_runs_cfn_lint_checkov_and_the_import_contracts():
    test_entry = _database()["test"]
    assert "lint" in test_entry["prerequisites"]
    # what `make lint` would run, without running it (the stamp is made up to date by -o)
    plan = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "-o", ".venv-checkov/.installed", "lint"], cwd=REPO,
        capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"^\.venv/bin/cfn-lint template\.yaml edge-web-acl\.yaml$", plan, re.M), plan
    assert re.search(r"^\.venv-checkov/bin/checkov --config-file \.checkov\.yaml --file template\.yaml "
                     r"--file edge-web-acl\.yaml$", plan, re.M), plan
    # the venv's lint-imports finds the package through the .pth alone (no PYTHONPATH), as a
    # developer or a hook runs it: `make lint` is where it runs, once
    assert re.search(r"^env -u PYTHONPATH \.venv/bin/lint-imports$", plan, re.M), plan


def test_help_lists_what_the_makefile_has():
    help_text = subprocess.run(["make", "help"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    entries = _database()
    listed = set(re.findall(r"^make ([a-z-]+)", help_text, re.M))
    assert listed, help_text
    assert not [name for name in listed if not (entries.get(name, {}).get("recipe") or entries.get(name, {}).get("prerequisites"))]


def test_lint_points_the_venvs_pth_back_at_this_tree():
    """A venv reused from another checkout names a tree that may be gone; every lint rewrites it."""
    pth = Path(subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-c",
                               "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()) / "holdfast-tree.pth"
    kept = pth.read_text() if pth.exists() else None
    try:
        pth.write_text("/nonexistent/checkout/layers/holdfast\n")
        subprocess.run(["make", "-o", ".venv/.installed", "tree-path"], cwd=REPO, capture_output=True, check=True)
        assert pth.read_text() == str(REPO / "layers" / "holdfast") + "\n"
    finally:
        if kept is not None:
            pth.write_text(kept)
