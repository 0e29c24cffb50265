"""make bench-coldstart: the import of every function's handler module next to `import boto3`.

For each function in template.yaml, a fresh interpreter imports the function's handler module
(its cold start as Lambda runs it: module code included, so the configuration and secret check
of `wiring.cold_start` too), and another fresh interpreter imports boto3 alone. Every target is
run `--repeats` times, interleaved round-robin so that the machine's noise falls on all of them
alike; the medians of the import's CPU time (the interpreter's own, so other load on the machine
does not count; the wall time is printed too) and the ratio to boto3 are printed, then, for the worst functions, where the
time goes (`python -X importtime`, self time summed per top-level package).

Layouts (`--layout`):

* ``build`` (default when the SAM CLI venv exists): what `sam build` packages, the way Lambda
  lays it out and the parity test runs it: `python -S -I`, sys.path = the built function, the
  built layer's python/ and the runtime's own boto3 (tests/parity/build.py builds and caches it).
* ``source``: functions/<name>/ and layers/holdfast/ on sys.path in the dev venv.

The environment is the function's own, from the template (parameter defaults, resources named by
placeholders) plus what Lambda sets, so Powertools behaves as on Lambda. The secret read of the
functions that check it at start is answered by a loopback stand-in for Secrets Manager
(AWS_ENDPOINT_URL): it is part of the cold start, its network time is not.

Bytecode (`--bytecode`): Lambda's /opt and /var/task are read-only, so a module whose bytecode is
not shipped is compiled from source at every cold start. The layer's build
(layers/holdfast/Makefile) ships a .pyc for every module of the layer, unchecked-hash; the
functions' own handler modules are shipped as source. ``shipped`` (the default for the build
layout) measures that: the probes read the bytecode beside the build's sources and write none
(`-B`); it refuses a build holding .pyc files the build did not write. ``none`` measures what SAM's
python3.12 builder shipped before (no bytecode in the package): the probes write none and read only
the standard library's (`-B -X pycache_prefix=<a directory holding the interpreter's standard
library bytecode>`: the runtime's standard library comes compiled; before issue 35 this mode
compiled it too). ``cached`` (the default for the source layout) reads and
writes a bytecode cache of the run's own. Given several (`--bytecode none shipped`), each target
is measured in each, interleaved, and the medians compared side by side.

First call (`--first-call`): what a function defers from its import to the first call of its main
route (pydantic and the request model it validates, then the route's services and their AWS
clients, `FIRST_CALL`) is timed after the import in the same interpreter, and the function is judged by import + first call: moving work into the first
request does not shorten a cold start.

Steps (`--steps` with `--only` one function): statements run one after another in one of the
function's cold interpreters, each timed alone (`"import boto3" "import requests" "import app"`):
which part of an import costs what, in CPU, where `-X importtime` gives wall-clock shares.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from devstack.measure.coldstart_env import (BASELINE, FIRST_CALL, REPO, Layout, first_call_specs, functions,
                                    lambda_variables, probe, probe_steps, secrets_stand_in)

#: Packages worth naming when a function loads them (the heavy ones of the layer).
WATCHED = ("aws_xray_sdk", "pydantic", "yookassa", "requests", "aws_lambda_powertools.event_handler",
           "aws_lambda_powertools.utilities.parameters", "aws_lambda_powertools.utilities.batch")


def by_package(report: str) -> dict[str, float]:
    """-X importtime's self times (µs) summed per top-level package, in ms."""
    totals: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        totals[name.split(".")[0]] += int(self_us) / 1000
    return dict(totals)


def watched(modules: list[str]) -> list[str]:
    loaded = set(modules)
    return [name for name in WATCHED if name in loaded]


# ----------------------------------------------------------------------------------- the run


def measure(layout: Layout, repeats: int, only: list[str] | None, worst: int, first_call: bool = False) -> dict[str, Any]:
    return measure_modes([layout], repeats, only, worst, first_call)[layout.bytecode]


def measure_modes(layouts: list[Layout], repeats: int, only: list[str] | None, worst: int,
                  first_call: bool = False) -> dict[str, dict[str, Any]]:
    """`measure` for each layout (the same build with different bytecode), their cold starts
    interleaved in every round so that the machine's noise falls on all alike: bytecode -> result."""
    specs = functions()
    if only:
        specs = {k: v for k, v in specs.items() if k in only or v["dir"] in only}
    with secrets_stand_in() as endpoint:
        layout = layouts[0]  # the functions' roots and environment are the same in every mode
        targets = {BASELINE: (BASELINE, None, lambda_variables("Baseline", next(iter(specs.values())), REPO, endpoint))}
        for logical_id, spec in specs.items():
            root = layout.task_root(logical_id, spec)
            targets[logical_id] = (spec["handler_module"], root, lambda_variables(logical_id, spec, root, endpoint))
        loaded = {name: watched(probe(layout, module, root, env)[1]) for name, (module, root, env) in targets.items()}
        runs = [(mode, name) for name in targets for mode in layouts]
        times: dict[tuple, list[float]] = {run: [] for run in runs}
        walls: dict[tuple, list[float]] = {run: [] for run in runs}
        firsts: dict[tuple, list[float]] = {run: [] for run in runs}
        calls = {name: first_call_specs(name) if first_call else [] for name in targets}
        for round_ in range(repeats):
            shift = round_ % len(runs)  # who goes first changes every round
            for mode, name in runs[shift:] + runs[:shift]:
                module, root, env = targets[name]
                took = probe(mode, module, root, env, first_call=calls[name])[0]
                times[mode, name].append(took["cpu"])
                walls[mode, name].append(took["wall"])
                firsts[mode, name].append(took["cpu"] + took["first_cpu"])
            print(f"  round {round_ + 1}/{repeats}", file=sys.stderr, flush=True)
        results = {}
        for mode in layouts:
            results[mode.bytecode] = _result(mode, specs, targets, loaded, calls, repeats, worst,
                                             {name: times[mode, name] for name in targets},
                                             {name: walls[mode, name] for name in targets},
                                             {name: firsts[mode, name] for name in targets}, first_call)
    return results


def _result(layout: Layout, specs: dict[str, Any], targets: dict[str, tuple], loaded: dict[str, list[str]],
            calls: dict[str, list], repeats: int, worst: int, times: dict[str, list[float]],
            walls: dict[str, list[float]], firsts: dict[str, list[float]], first_call: bool) -> dict[str, Any]:
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    with_first = {name: statistics.median(values) * 1000 for name, values in firsts.items()}
    base = medians[BASELINE]
    ranked = sorted(specs, key=lambda lid: medians[lid], reverse=True)
    attributed = {}
    for name in [BASELINE, *ranked[:worst]]:
        module, root, env = targets[name]
        attributed[name] = by_package(probe(layout, module, root, env, importtime=True)[2])
    return {
        "layout": layout.described, "bytecode": layout.bytecode, "repeats": repeats, "python": sys.version.split()[0],
        "boto3_ms": round(base, 1),
        "functions": {lid: {"median_ms": round(medians[lid], 1), "ratio": round(medians[lid] / base, 2),
                            "runs_ms": [round(t * 1000, 1) for t in times[lid]],
                            "wall_median_ms": round(statistics.median(walls[lid]) * 1000, 1), "loads": loaded[lid],
                            **({"first_call": FIRST_CALL[lid]["route"],
                                "with_first_call_ms": round(with_first[lid], 1),
                                "with_first_call_ratio": round(with_first[lid] / base, 2)} if calls[lid] else {})}
                      for lid in ranked},
        "first_call": first_call,
        "boto3_runs_ms": [round(t * 1000, 1) for t in times[BASELINE]],
        "boto3_wall_median_ms": round(statistics.median(walls[BASELINE]) * 1000, 1),
        "importtime_ms_by_package": {name: dict(sorted(packages.items(), key=lambda kv: -kv[1]))
                                     for name, packages in attributed.items()},
    }


def honest_ratio(row: dict[str, Any]) -> float:
    """The ratio a function is judged by: with its first call's deferred work when measured."""
    return row.get("with_first_call_ratio", row["ratio"])


def print_report(result: dict[str, Any], target: float, top: int) -> None:
    print(f"layout: {result['layout']}")
    print(f"bytecode: {result['bytecode']}; median of {result['repeats']} fresh interpreters each, interleaved; "
          f"python {result['python']}")
    print(f"\n{'':28}{'CPU ms':>8}{'x boto3':>9}{'wall ms':>9}  heavy packages loaded")
    print(f"{'import boto3 alone':28}{result['boto3_ms']:>8.1f}{1.0:>9.2f}{result['boto3_wall_median_ms']:>9.1f}")
    for lid, row in result["functions"].items():
        flag = "  OVER" if honest_ratio(row) > target else ""
        print(f"{lid:28}{row['median_ms']:>8.1f}{row['ratio']:>9.2f}{row['wall_median_ms']:>9.1f}  "
              f"{', '.join(row['loads']) or '-'}{flag}")
    firsts = {lid: row for lid, row in result["functions"].items() if "first_call" in row}
    if firsts:
        print("\nimport + what the first call of the main route adds (pydantic, its request model, its services "
              "and their clients; --first-call):")
        for lid, row in firsts.items():
            print(f"{lid:28}{row['with_first_call_ms']:>8.1f}{row['with_first_call_ratio']:>9.2f}  {row['first_call']}")
    baseline = result["importtime_ms_by_package"].get(BASELINE, {})
    print(f"\nwhere the time goes (-X importtime, self ms per top-level package; beyond boto3's own):")
    for name, packages in result["importtime_ms_by_package"].items():
        if name == BASELINE:
            print(f"  {name}: " + ", ".join(f"{p} {ms:.0f}" for p, ms in list(packages.items())[:top]))
            continue
        extra = {p: ms - baseline.get(p, 0.0) for p, ms in packages.items()}
        ranked = sorted(extra.items(), key=lambda kv: -kv[1])[:top]
        print(f"  {name}: " + ", ".join(f"{p} {ms:+.0f}" for p, ms in ranked))
    over = [lid for lid, row in result["functions"].items() if honest_ratio(row) > target]
    measured = "import + first call where measured" if firsts else "import only (--first-call adds the deferred work)"
    print(f"\ntarget <= {target}x boto3 ({measured}): " + ("met by every function" if not over else f"over: {', '.join(over)}"))


def print_comparison(results: dict[str, dict[str, Any]]) -> None:
    """One line per function: CPU ms and ratio to boto3 in each bytecode mode, import and (where
    measured) import + first call, from the same interleaved run."""
    modes = list(results)
    first = next(iter(results.values()))
    print(f"\nmedians, CPU ms (x import boto3) per bytecode mode: {' | '.join(modes)}")
    print(f"{'import boto3 alone':28}" + " | ".join(f"{results[m]['boto3_ms']:>8.1f} ({1.0:.2f})" for m in modes))
    for lid in first["functions"]:
        rows = [results[m]["functions"][lid] for m in modes]
        line = " | ".join(f"{row['median_ms']:>8.1f} ({row['ratio']:.2f})" for row in rows)
        if "with_first_call_ms" in rows[0]:
            line += "   + first call: " + " | ".join(
                f"{row['with_first_call_ms']:>8.1f} ({row['with_first_call_ratio']:.2f})" for row in rows)
        print(f"{lid:28}{line}")


def measure_steps(layout: Layout, logical_id: str, steps: list[str], repeats: int) -> list[float]:
    """Median CPU ms of each step over ``repeats`` fresh interpreters with the function's path and
    environment (the secret stand-in answering), as `--steps` prints them."""
    spec = functions()[logical_id]
    root = layout.task_root(logical_id, spec)
    runs: list[list[float]] = []
    with secrets_stand_in() as endpoint:
        env = lambda_variables(logical_id, spec, root, endpoint)
        for round_ in range(repeats):
            runs.append(probe_steps(layout, root, env, steps))
            print(f"  round {round_ + 1}/{repeats}", file=sys.stderr, flush=True)
    return [statistics.median(run[index] for run in runs) * 1000 for index in range(len(steps))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make bench-coldstart", description=__doc__.split("\n\n")[0])
    parser.add_argument("--layout", choices=("auto", "build", "source"), default="auto",
                        help="auto: the sam build when the SAM CLI venv exists, else the source tree")
    parser.add_argument("--bytecode", choices=("none", "shipped", "cached"), nargs="+",
                        help="shipped: read the .pyc files the build ships beside its sources and write none, as "
                             "Lambda does (default for the build layout); none: compile every module at every "
                             "start, as before the build shipped bytecode; cached: from a .pyc cache of the run's "
                             "own (default for source). Several: measured interleaved, then compared")
    parser.add_argument("--build-dir", type=Path,
                        help="a sam build output to measure (default: build the sources, cached like the parity test)")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--only", nargs="*", help="logical ids or function folders")
    parser.add_argument("--worst", type=int, default=4, help="how many of the slowest get the importtime breakdown")
    parser.add_argument("--top", type=int, default=6, help="packages named per breakdown")
    parser.add_argument("--target", type=float, default=1.5, help="ratio to boto3 that counts as met")
    parser.add_argument("--check", action="store_true", help="exit 1 when a function is over the target")
    parser.add_argument("--first-call", action="store_true",
                        help="also time, after each import, what the function's main route defers to its first "
                             "call (pydantic and its request model, FIRST_CALL); judged by import + that")
    parser.add_argument("--instructions", action="store_true",
                        help="count each cold start's instructions under valgrind's callgrind instead of timing it: "
                             "one run, repeatable whatever the machine's load (~10 minutes; devstack/measure/coldstart_count.py)")
    parser.add_argument("--steps", nargs="+", metavar="STATEMENT",
                        help="with --only and one function: time these statements one after another in one of "
                             "its cold interpreters (e.g. 'import boto3' 'import requests' 'import app'), "
                             "each against the first")
    parser.add_argument("--out", type=Path, default=REPO / "bench-results")
    args = parser.parse_args(argv)
    kind = args.layout
    if kind == "auto":
        kind = "build" if (REPO / ".venv-sam" / "bin" / "sam").exists() else "source"
    if args.build_dir:
        kind = "build"
    modes = list(dict.fromkeys(args.bytecode or ["shipped" if kind == "build" else "cached"]))
    if "shipped" in modes and kind != "build":
        parser.error("--bytecode shipped measures a sam build: use --layout build")
    layouts = [Layout(kind, mode, args.build_dir) for mode in modes]
    layout = layouts[-1]
    if len(layouts) > 1 and (args.steps or args.instructions):
        parser.error("--steps and --instructions take one --bytecode")
    if args.steps:
        if not args.only or len(args.only) != 1:
            parser.error("--steps needs --only with one function")
        (only,) = args.only
        logical_id = next((lid for lid, spec in functions().items() if only in (lid, spec["dir"])), None)
        if logical_id is None:
            parser.error(f"no function {only} in template.yaml")
        try:
            spent = measure_steps(layout, logical_id, args.steps, args.repeats)
        finally:
            shutil.rmtree(layout.pycache_dir, ignore_errors=True)
        print(f"layout: {layout.described}; bytecode: {layout.bytecode}; {logical_id}, median of {args.repeats}")
        print(f"{'CPU ms':>8}{'x first':>9}  statement (each after the ones above, in one interpreter)")
        for statement, ms in zip(args.steps, spent):
            print(f"{ms:>8.1f}{ms / spent[0] if spent[0] else 0.0:>9.2f}  {statement}")
        return 0
    if args.instructions:
        from devstack.measure import coldstart_count

        try:
            counted = coldstart_count.measure(layout, args.only, args.first_call)
        finally:
            shutil.rmtree(layout.pycache_dir, ignore_errors=True)
        over = coldstart_count.print_report(counted, args.target)
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / f"coldstart-instructions-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps(counted, indent=2))
        print(f"results: {path}")
        return 1 if args.check and over else 0
    try:
        results = measure_modes(layouts, args.repeats, args.only, args.worst, args.first_call)
    finally:
        for each in layouts:
            shutil.rmtree(each.pycache_dir, ignore_errors=True)
    for index, result in enumerate(results.values()):
        print(("\n" if index else "") + f"=== bytecode: {result['bytecode']}")
        print_report(result, args.target, args.top)
    if len(results) > 1:
        print_comparison(results)
    result = results[layout.bytecode]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"coldstart-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result if len(results) == 1 else {"by_bytecode": results}, indent=2))
    print(f"results: {path}")
    # --check judges the last --bytecode given (the default: what the build ships)
    over = any(honest_ratio(row) > args.target for row in result["functions"].values())
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
