"""Two sam builds' cold starts side by side, interleaved in every round (issue 49): the same
functions, environment and probe as `make bench-coldstart --first-call`, each build's `import
boto3` its own yardstick, so that the machine's noise falls on both builds alike.

    .venv/bin/python -m devstack.measure.coldstart_ab <before build> <after build> \\
        --only BookingsApiFunction CatalogApiFunction --repeats 7
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from devstack.measure.coldstart_env import (BASELINE, Layout, first_call_specs, functions, lambda_variables, probe,
                                            secrets_stand_in)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--only", nargs="+", required=True, help="logical ids")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    builds = {"before": Layout("build", "shipped", args.before.resolve()),
              "after": Layout("build", "shipped", args.after.resolve())}
    specs = functions()
    runs: dict[tuple[str, str], list[float]] = {}
    with open("/proc/loadavg") as load:
        started = load.read().split()[:3]
    with secrets_stand_in() as endpoint:
        targets = []
        for name, layout in builds.items():
            env = lambda_variables("Baseline", next(iter(specs.values())), layout.root, endpoint)
            targets.append((name, BASELINE, BASELINE, None, env, []))
            for lid in args.only:
                root = layout.task_root(lid, specs[lid])
                targets.append((name, lid, specs[lid]["handler_module"], root,
                                lambda_variables(lid, specs[lid], root, endpoint), first_call_specs(lid)))
        for round_ in range(args.repeats):
            shift = round_ % len(targets)
            for name, lid, module, root, env, calls in targets[shift:] + targets[:shift]:
                took = probe(builds[name], module, root, env, first_call=calls)[0]
                runs.setdefault((name, lid), []).append(took["cpu"] + took["first_cpu"])
            print(f"  round {round_ + 1}/{args.repeats}", file=sys.stderr, flush=True)
    with open("/proc/loadavg") as load:
        ended = load.read().split()[:3]
    print(f"CPU ms, import + the main route's first call where FIRST_CALL names one; median of {args.repeats} "
          f"(range), interleaved; load {' '.join(started)} -> {' '.join(ended)}")
    for lid in [BASELINE, *args.only]:
        cells = []
        for name in builds:
            ms = [t * 1000 for t in runs[name, lid]]
            base = statistics.median(runs[name, BASELINE]) * 1000
            cells.append(f"{name} {statistics.median(ms):6.0f} ({min(ms):.0f}-{max(ms):.0f}) = {statistics.median(ms) / base:.2f}x")
        print(f"{lid:28}" + "   ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
