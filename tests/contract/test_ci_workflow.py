"""The hosted CI workflow runs what .ci/run runs (make test), on the Lambda runtime's Python."""
from samtranslator.yaml_helper import yaml_parse

from tests.support.handlers import REPO


def test_the_workflow_runs_make_test_on_python_3_12():
    workflow = yaml_parse((REPO / ".github/workflows/test.yml").read_text())
    steps = workflow["jobs"]["test"]["steps"]
    assert any(step.get("run", "").startswith("make test") for step in steps)
    pythons = [step["with"]["python-version"] for step in steps if step.get("uses", "").startswith("actions/setup-python")]
    assert pythons == ["3.12"]
    assert "make test" in (REPO / ".ci/run").read_text()
