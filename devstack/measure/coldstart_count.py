"""`make bench-coldstart` by instructions: each cold start counted by callgrind instead of timed.

CPU times of one import move by 10-15 % from run to run on these shared 2-core machines, and the
medians of a whole run by ~0.1x of boto3, which is the size of what is left to decide. Valgrind's
callgrind counts the instructions a process executes: the same interpreter importing the same
files with the same environment gives the same count whatever else the machine does. Slow (an
import takes ~50 times longer under callgrind, so a full run is ~10 minutes on two cores), but
one run is the answer.

Each target is the same probe as the timed bench (devstack/measure/coldstart_env.py: the layout, the
environment, the secret stand-in, `--first-call`'s validation), run once; the interpreter's own
start (the probe importing `json`, which it has already loaded) is subtracted from every count, so
a ratio is import (+ first call) over `import boto3` alone, like the timed one. Instruction counts
are not time: cache misses and the like are not in them, so read the ratio, not a duration.
"""
from __future__ import annotations

import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from devstack.measure.coldstart_env import (BASELINE, FIRST_CALL, REPO, Layout, first_call_specs, functions,
                                    lambda_variables, probe, secrets_stand_in)

#: a module the probe has already imported: its count is the interpreter's start and the probe itself
STARTUP = "json"


def measure(layout: Layout, only: list[str] | None, first_call: bool, parallel: int = 2) -> dict[str, Any]:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    specs = functions()
    if only:
        specs = {k: v for k, v in specs.items() if k in only or v["dir"] in only}
    with secrets_stand_in() as endpoint:
        base_env = lambda_variables("Baseline", next(iter(specs.values())), REPO, endpoint)
        jobs: list[tuple[str, str, Any, dict[str, str], list[dict[str, Any]]]] = [
            ("startup", STARTUP, None, base_env, []), (BASELINE, BASELINE, None, base_env, [])]
        for lid, spec in specs.items():
            root = layout.task_root(lid, spec)
            env = lambda_variables(lid, spec, root, endpoint)
            jobs.append((lid, spec["handler_module"], root, env, []))
            if first_call and lid in FIRST_CALL:
                jobs.append((f"{lid}+first", spec["handler_module"], root, env, first_call_specs(lid)))
        counts: dict[str, int] = {}

        def one(job: tuple[str, str, Any, dict[str, str], list[dict[str, Any]]]) -> None:
            name, module, root, env, calls = job
            counts[name] = int(probe(layout, module, root, env, first_call=calls, instructions=True)[0]["instructions"])
            print(f"  {len(counts)}/{len(jobs)} {name}: {counts[name] / 1e9:.3f} G instructions", file=sys.stderr,
                  flush=True)

        with ThreadPoolExecutor(max_workers=parallel) as pool:
            list(pool.map(one, jobs))
    start = counts["startup"]
    base = counts[BASELINE] - start
    rows = {}
    for lid in specs:
        own = counts[lid] - start
        row: dict[str, Any] = {"instructions": own, "ratio": round(own / base, 3)}
        if f"{lid}+first" in counts:
            with_first = counts[f"{lid}+first"] - start
            row.update(first_call=FIRST_CALL[lid]["route"], with_first_call_instructions=with_first,
                       with_first_call_ratio=round(with_first / base, 3))
        rows[lid] = row
    ranked = dict(sorted(rows.items(), key=lambda kv: -kv[1].get("with_first_call_ratio", kv[1]["ratio"])))
    return {"layout": layout.described, "bytecode": layout.bytecode, "counter": "callgrind instructions",
            "startup_instructions": start, "boto3_instructions": base, "functions": ranked,
            "first_call": first_call}


def print_report(result: dict[str, Any], target: float) -> list[str]:
    print(f"layout: {result['layout']}")
    print(f"bytecode: {result['bytecode']}; instructions counted by callgrind, once each (repeatable), "
          f"the interpreter's start ({result['startup_instructions'] / 1e9:.3f} G) subtracted")
    print(f"\n{'':28}{'G instr':>9}{'x boto3':>9}{'+ first call':>14}{'x boto3':>9}")
    print(f"{'import boto3 alone':28}{result['boto3_instructions'] / 1e9:>9.3f}{1.0:>9.2f}")
    over = []
    for lid, row in result["functions"].items():
        judged = row.get("with_first_call_ratio", row["ratio"])
        first = (f"{row['with_first_call_instructions'] / 1e9:>14.3f}{row['with_first_call_ratio']:>9.2f}"
                 if "with_first_call_ratio" in row else f"{'':>14}{'':>9}")
        flag = "  OVER" if judged > target else ""
        if flag:
            over.append(lid)
        print(f"{lid:28}{row['instructions'] / 1e9:>9.3f}{row['ratio']:>9.2f}{first}{flag}"
              + (f"  ({row['first_call']})" if "first_call" in row else ""))
    print(f"\ntarget <= {target}x boto3 (import + first call where measured): "
          + ("met by every function" if not over else f"over: {', '.join(over)}"))
    return over
