"""docs/design.ipynb is executable evidence: execute a fresh copy of it and fail on any cell error.

The notebook starts its own embedded AWS stack and payment sandbox inside the kernel (loopback only),
so this test needs nothing from the other fixtures. It builds the cells from docs/build_notebook.py
(the notebook's source), so a stale committed notebook cannot hide a failure.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CELL_TIMEOUT = 120  # seconds per cell; the whole notebook runs in about a minute


def _builder():
    spec = importlib.util.spec_from_file_location("holdfast_design_notebook", ROOT / "docs" / "build_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernel_name(tmp_path: Path) -> str:
    """The venv's python3 kernelspec; if jupyter cannot find one, write one for this interpreter."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("python3")
        return "python3"
    except NoSuchKernel:
        from ipykernel.kernelspec import install

        install(prefix=str(tmp_path / "jupyter"), kernel_name="holdfast-design")
        import os

        os.environ["JUPYTER_PATH"] = str(tmp_path / "jupyter" / "share" / "jupyter")
        return "holdfast-design"


@pytest.mark.timeout(600)
def test_design_notebook_executes_without_errors(tmp_path):
    import nbformat

    builder = _builder()
    nb = builder.build()
    builder.execute(nb, timeout=CELL_TIMEOUT, kernel_name=_kernel_name(tmp_path))
    nbformat.write(nb, tmp_path / "design.ipynb")
    errors = [(index, output.get("ename"), output.get("evalue"))
              for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert errors == []
    assert all(cell.get("execution_count") for cell in nb.cells if cell.cell_type == "code"), "a cell did not run"
    assert sys.executable  # the kernel is started with this interpreter (jupyter_client maps "python" to it)


def test_committed_notebook_has_outputs():
    import nbformat

    nb = nbformat.read(ROOT / "docs" / "design.ipynb", as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    with_output = [cell for cell in code if cell.get("outputs")]
    assert code and len(with_output) >= len(code) - 2, "run `make notebook` and commit the outputs"
    assert not [o for cell in code for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    source = [cell.source for cell in nb.cells]
    assert source == [text for _, text in _builder().CELLS], "docs/design.ipynb is stale: run `make notebook`"
