"""docs/design.ipynb is executable evidence, executed by `make notebook` (which fails on any cell's
error) and committed with its outputs. `make test` does not execute it again (86 s of a run): it
fails when the committed notebook is stale, its cells not the builder's (docs/build_notebook.py)
or its execution made from other inputs than the current ones (`INPUTS` there: the builder, the
drawing helpers of devstack/design/, the transitions it draws).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _builder():
    spec = importlib.util.spec_from_file_location("holdfast_design_notebook", ROOT / "docs" / "build_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _committed():
    import nbformat

    return nbformat.read(ROOT / "docs" / "design.ipynb", as_version=4)


def test_committed_notebook_has_outputs():
    nb = _committed()
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    with_output = [cell for cell in code if cell.get("outputs")]
    assert code and len(with_output) >= len(code) - 2, "run `make notebook` and commit the outputs"
    assert not [o for cell in code for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert all(cell.get("execution_count") for cell in code), "a cell did not run: run `make notebook`"
    source = [cell.source for cell in nb.cells]
    assert source == [text for _, text in _builder().CELLS], "docs/design.ipynb is stale: run `make notebook`"


def test_committed_notebook_was_executed_from_the_current_inputs():
    recorded = _committed().metadata.get("holdfast", {}).get("inputs_sha256")
    assert recorded == _builder().inputs_digest(), (
        "docs/design.ipynb was executed from other inputs than the current ones: run `make notebook`")


def test_the_digest_changes_with_every_input(tmp_path, monkeypatch):
    """The staleness check can fail: a change to any input changes the digest."""
    builder = _builder()
    real = builder.inputs_digest()
    first_files = []
    for name in builder.INPUTS:
        source = ROOT / name
        files = sorted(source.rglob("*.py")) if source.is_dir() else [source]
        for file in files:
            copy = tmp_path / file.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(file.read_bytes())
        first_files.append(tmp_path / files[0].relative_to(ROOT))
    monkeypatch.setattr(builder, "ROOT", tmp_path)
    seen = {builder.inputs_digest()}
    assert seen == {real}
    for copy in first_files:
        copy.write_bytes(copy.read_bytes() + b"\n# changed\n")
        changed = builder.inputs_digest()
        assert changed not in seen, copy
        seen.add(changed)
