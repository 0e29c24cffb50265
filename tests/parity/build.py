"""The deployable artifacts, built as `sam build` builds them, and the Lambda runtime's own SDK.

Both are cached under .devstack/ and rebuilt only when their inputs change: the build is keyed on
the hash of template.yaml, functions/ and layers/ (and the SAM CLI pin and the architecture), so a
second `make test` reuses it. `python -m tests.parity.build` prepares both ahead of the tests
(the Makefile runs it).
"""
from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".devstack" / "parity"
SAM = REPO / ".venv-sam" / "bin" / "sam"


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def runtime_sdk_pins() -> list[str]:
    """boto3 and botocore as the python3.12 runtime ships them (pyproject's tool.holdfast table)."""
    return list(_pyproject()["tool"]["holdfast"]["lambda-runtime-sdk"])


def sam_pins() -> list[str]:
    return list(_pyproject()["project"]["optional-dependencies"]["sam"])


def host_architecture() -> str:
    """Lambda's name for this machine's architecture (the build must import here)."""
    machine = platform.machine().lower()
    return {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[machine]


_ARCH_KEYS = re.compile(r"^(\s*(?:Architectures|CompatibleArchitectures):\s*)\[arm64\]\s*$|"
                        r"^(\s*BuildArchitecture:\s*)arm64\s*$", re.MULTILINE)


def template_for(architecture: str) -> str:
    """template.yaml with every architecture setting rewritten (nothing else changes)."""
    text = (REPO / "template.yaml").read_text(encoding="utf-8")
    if architecture == "arm64":
        return text

    def swap(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return f"{match.group(1)}[{architecture}]"
        return f"{match.group(2)}{architecture}"

    rewritten, count = _ARCH_KEYS.subn(swap, text)
    if count < 3 or "arm64" in rewritten:
        raise AssertionError(f"template.yaml: expected the arm64 settings in Globals and the layer, "
                             f"rewrote {count}; arm64 left: {'arm64' in rewritten}")
    return rewritten


def _inputs_digest(architecture: str) -> str:
    digest = hashlib.sha256()
    digest.update("\n".join([architecture, *sam_pins(), template_for(architecture)]).encode())
    for top in ("functions", "layers"):
        for path in sorted((REPO / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(REPO)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _sam_environment() -> dict[str, str]:
    # sam looks for `python3.12` on PATH; the venv's base interpreter is the one Makefile chose
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve().parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))}
    env["PATH"] = f"{base}{os.pathsep}{env.get('PATH', '')}"
    env["SAM_CLI_TELEMETRY"] = "0"
    env["AWS_DEFAULT_REGION"] = "eu-central-1"
    return env


def run_sam(*args: str, cwd: Path = REPO, timeout: float = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if not SAM.exists():
        raise AssertionError(f"{SAM} is missing: `make test` creates it (the SAM CLI has a venv of its own)")
    return subprocess.run([str(SAM), *args], cwd=cwd, env={**_sam_environment(), **(env or {})}, capture_output=True,
                          text=True, timeout=timeout, check=False)


def build(architecture: str | None = None) -> Path:
    """The `sam build` output directory for the current sources (built once per content hash)."""
    architecture = architecture or host_architecture()
    key = _inputs_digest(architecture)
    target = CACHE / f"sam-build-{architecture}-{key}"
    if (target / "build" / "template.yaml").is_file():
        return target / "build"
    CACHE.mkdir(parents=True, exist_ok=True)
    # keep a couple of earlier builds (checkouts sharing .devstack may be on other commits)
    for old in sorted(CACHE.glob("sam-build-*"), key=lambda p: p.stat().st_mtime)[:-2]:
        shutil.rmtree(old, ignore_errors=True)
    staging = CACHE / f"staging-{key}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    (staging / "template.yaml").write_text(template_for(architecture), encoding="utf-8")
    done = run_sam("build", "--template-file", str(staging / "template.yaml"), "--base-dir", str(REPO),
                   "--build-dir", str(staging / "build"), "--parallel",
                   # the layer's Makefile installs binary wheels for this, template.yaml's by default
                   env={"LAYER_ARCHITECTURE": architecture})
    if done.returncode != 0:
        raise AssertionError(f"sam build failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    if target.exists():  # built meanwhile by another run on the same sources
        shutil.rmtree(staging, ignore_errors=True)
    else:
        staging.rename(target)
    return target / "build"


#: The flags word of a .pyc header (PEP 552) as `compileall --invalidation-mode unchecked-hash`
#: writes it: hash-based (bit 0), source never checked (bit 1 clear).
UNCHECKED_HASH = 0b01


def bytecode_flags(pyc: Path) -> int:
    """The flags word of a .pyc: 0 timestamp-checked, 0b11 checked-hash, 0b01 unchecked-hash."""
    with pyc.open("rb") as f:
        header = f.read(8)
    return int.from_bytes(header[4:8], "little")


def stray_bytecode(root: Path) -> list[Path]:
    """The .pyc files under ``root`` that the layer's build did not write: the ones an interpreter
    allowed to write beside the sources left (timestamp-checked), which Lambda never would."""
    return [pyc for pyc in sorted(root.rglob("*.pyc")) if bytecode_flags(pyc) != UNCHECKED_HASH]


def runtime_sdk() -> Path:
    """A directory holding boto3/botocore at the runtime's version (what /var/runtime provides)."""
    pins = runtime_sdk_pins()
    target = CACHE / ("runtime-sdk-" + "-".join(p.replace("==", "-") for p in pins))
    if (target / ".complete").is_file():
        return target
    shutil.rmtree(target, ignore_errors=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-compile", "--target", str(target), *pins],
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise AssertionError(f"pip install --target {target} {pins} failed:\n{done.stderr[-4000:]}")
    (target / ".complete").write_text("\n".join(pins) + "\n")
    return target


if __name__ == "__main__":
    print(f"==> runtime SDK: {runtime_sdk()}")
    print(f"==> sam build ({host_architecture()}): {build()}")
