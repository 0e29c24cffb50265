"""`make bench-coldstart --bytecode shipped`: the probes read the bytecode beside the build's
sources and write none, and a build holding bytecode its Makefile did not write is refused, since
that would be measured as shipped."""
from __future__ import annotations

import py_compile
import subprocess
import sys

import pytest

from devstack.coldstart_env import Layout


def _build_with(tmp_path, mode: py_compile.PycInvalidationMode):
    layer = tmp_path / "HoldfastLayer" / "python"
    layer.mkdir(parents=True)
    (layer / "shipped_module.py").write_text("VALUE = 'from its bytecode'\n")
    py_compile.compile(str(layer / "shipped_module.py"), invalidation_mode=mode, doraise=True)
    return tmp_path


def test_shipped_reads_the_build_s_bytecode_and_writes_none(tmp_path):
    root = _build_with(tmp_path, py_compile.PycInvalidationMode.UNCHECKED_HASH)
    layout = Layout("build", "shipped", root)
    layer = root / "HoldfastLayer" / "python"
    (layer / "shipped_module.py").write_text("VALUE = 'compiled from source'\n")
    (layer / "written_here.py").write_text("VALUE = 1\n")
    probe = "import shipped_module, written_here; print(shipped_module.VALUE)"
    done = subprocess.run([sys.executable, *layout.flags(), "-c", f"import sys; sys.path[:0] = {layout.sys_path(None)!r}; {probe}"],
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "from its bytecode"
    assert not (layer / "__pycache__" / f"written_here.{sys.implementation.cache_tag}.pyc").exists()


def test_shipped_refuses_a_build_with_bytecode_it_did_not_ship(tmp_path):
    root = _build_with(tmp_path, py_compile.PycInvalidationMode.TIMESTAMP)
    with pytest.raises(RuntimeError, match="not the build's own"):
        Layout("build", "shipped", root)


def test_shipped_needs_a_build():
    with pytest.raises(ValueError, match="build layout"):
        Layout("source", "shipped")
