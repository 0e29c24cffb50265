"""`make bench-coldstart --bytecode shipped`: the probes read the bytecode beside the build's
sources and write none, and a build holding bytecode its Makefile did not write is refused, since
that would be measured as shipped."""
from __future__ import annotations

import json
import py_compile
import subprocess
import sys

import pytest

from devstack.measure.coldstart_env import Layout


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


_COMPILES = ("import _frozen_importlib_external as e, json, sys\n"
             "compiled = []\n"
             "source_to_code = e.SourceFileLoader.source_to_code\n"
             "def counted(self, data, path, *a, **k):\n"
             "    compiled.append(path)\n"
             "    return source_to_code(self, data, path, *a, **k)\n"
             "e.SourceFileLoader.source_to_code = counted\n"
             "sys.path.insert(0, sys.argv[1])\n"
             "import email.parser, http.client, logging, shipped_module\n"
             "print(json.dumps(compiled))\n")


def test_none_compiles_the_package_and_reads_the_standard_library_s_bytecode(tmp_path):
    """As Lambda ran a build without bytecode: the runtime's standard library comes compiled, every
    module of the package is compiled at every start, a .pyc beside it or not."""
    root = _build_with(tmp_path, py_compile.PycInvalidationMode.UNCHECKED_HASH)
    layer = root / "HoldfastLayer" / "python"
    layout = Layout("build", "none", root)
    done = subprocess.run([sys.executable, *layout.flags(), "-c", _COMPILES, str(layer)],
                          capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == [str(layer / "shipped_module.py")]


def test_shipped_needs_a_build():
    with pytest.raises(ValueError, match="build layout"):
        Layout("source", "shipped")
