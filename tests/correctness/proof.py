"""``make proof``: run many randomized histories of the booking model with faults and report every
violation of the invariants (docs/invariants.md), each with the seed that replays it.

A history is a fresh table, four events of one inventory kind (the seed picks it, from
kind_cases.MODEL_CASES) and ``--steps`` operations drawn (weighted) from
``model.OPERATIONS`` by a ``random.Random(seed)``, checked after every step, then settled and
checked again. Every fifth seed (``--gate-every``) is instead a history of the gate world
(``gate_model.py``: a lot with two real gate controllers, reservations paid through the booking
path, passes online and offline with lost answers, syncs from both gates, exit payments, time
passing), checked after every step by its rules G1-G8. History k of a run uses seed ``base + k``; ``--seed X --histories 1`` (or
``make proof SEED=X HISTORIES=1``) replays exactly that history and prints its whole story
(``PROOF_TRACEBACK=1`` adds the traceback).

The store is the table's fakes (tests/support/fake_table.py, held to the adapters by
tests/contract/storage/), and every ``--compare-every``-th history (4: a quarter) is played again
on moto's DynamoDB backend in-process (single-threaded, where moto is exact), through
``helpers.DirectDynamoDB`` (the real adapter code and its expressions, moto's request handler, no
HTTP): a story that parts from the fakes' is a violation (F1). ``--store moto`` plays every
history there (about eight times slower), ``--store boto3`` through boto3 over ``mock_aws``
(slower again). Histories run in ``--workers`` processes. Development tool only, never deployed.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import secrets
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for entry in (str(ROOT / "layers" / "holdfast"), str(ROOT)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

#: The worker's client of moto in process (None: the histories run on the fakes and none is
#: compared), and whether every history runs on it (``--store moto`` or ``boto3``).
_client: Any = None
_on_moto = False


def _setup(store: str, compare_every: int) -> None:
    """Per worker process: fake credentials; unless every history runs on the fakes, moto
    in-process with the devstack's transaction code and the client of ``store``."""
    global _client, _on_moto
    os.environ.update({"AWS_DEFAULT_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing"})
    os.environ.pop("HOLDFAST_CRASH_POINTS", None)
    import logging

    logging.disable(logging.ERROR)   # the services log every fault the model injects
    _on_moto = store != "fakes"
    if not _on_moto and not compare_every:
        return
    from moto import mock_aws

    from devstack.aws import queries, transactions

    mock = mock_aws()
    mock.start()
    transactions.install()
    queries.install()
    if store == "boto3":
        import boto3

        _client = boto3.client("dynamodb", region_name="eu-central-1")
    else:
        from tests.correctness.helpers import DirectDynamoDB

        _client = DirectDynamoDB()


def run_history(seed: int, steps: int, client: Any, skip: tuple[str, ...] = (),
                keep_table: bool = False) -> tuple[str | None, list[str], Counter[str]]:
    """One history; returns (the first violation or None, the story, what it exercised).
    ``client``: a client of moto in process, the history's table made on it; None: the fakes."""
    from tests.correctness.kind_cases import MODEL_CASES
    from tests.correctness.model import (OPERATIONS, BookingModel, RandomDraw, deterministic_uuids,
                                         fake_storage, moto_storage)

    rng = random.Random(seed)
    undo = deterministic_uuids(random.Random(seed * 7919 + 1))
    table = f"proof-{seed}"
    model: Any = None
    names = [name for name in OPERATIONS if name not in skip]
    weights = [OPERATIONS[name] for name in names]
    story: list[str] = []
    before, step = 0, "setup"
    try:
        # The seed also picks the inventory kind under test, so every kind gets its share of a run.
        kind = MODEL_CASES[seed % len(MODEL_CASES)]
        story.append(f"-- inventory kind {kind.name}")
        storage = fake_storage() if client is None else moto_storage(client, table)
        model = BookingModel(storage, seed, kind=kind)
        draw = RandomDraw(rng)
        for index in range(steps):
            name = rng.choices(names, weights)[0]
            before = len(model.trace)
            step = f"{index:02d} {name}"
            model.intent, model.reached = "", True
            getattr(model, name)(draw)
            # it acted: an operation with nothing to act on says nothing, or says so (`unreached`)
            if len(model.trace) > before and model.reached:
                model.log[f"ran:{name}"] += 1
            model.check()
            story.extend(f"{index:02d} {line}" for line in model.trace[before:])
        before, model.intent = len(model.trace), ""
        step = "settle: every notification, reconciliation and refund retry, no faults"
        story.append(f"-- {step}")
        model.settle()
        story.append(f"-- the table settled: {model.table_digest()}")
        return None, story, model.log
    except Exception as exc:  # noqa: BLE001 - a violation, or a model bug: reported, never hidden
        if model is not None:
            story.extend(f"   {line}" for line in model.trace[before:])
        intent = model.intent if model is not None else ""
        story.append(f"!! failed in: {step}{': ' + intent if intent else ''}")
        if os.environ.get("PROOF_TRACEBACK"):
            story.append(traceback.format_exc())
        message = str(exc).splitlines()[0] if isinstance(exc, AssertionError) else \
            f"X0 the model itself failed: {type(exc).__name__}: {exc}"
        return message, story, model.log if model else Counter()
    finally:
        undo()
        try:
            if client is not None and not keep_table:
                client.delete_table(TableName=table)
        except Exception:  # noqa: BLE001 - the table may not exist if setup failed
            pass


def is_gate_history(seed: int, gate_every: int) -> bool:
    """Every ``gate_every``-th seed is a history of the gate world (tests/correctness/gate_model.py:
    one lot, two real gate controllers, reservations paid through the booking path, passes online
    and offline, syncs, exit payments, time); the seed alone decides, so a replay of one seed
    replays the same world."""
    return gate_every > 0 and seed % gate_every == 0


def run_gate_history(seed: int, steps: int, client: Any) -> tuple[str | None, list[str], Counter[str]]:
    """One gate history, on moto in process through ``client``, or on the fakes (None)."""
    from tests.correctness.gate_model import play_gate_history

    violation, story, log = play_gate_history(client, f"proof-gate-{seed}", seed, steps)
    return violation, ["-- the gate world", *story], log


def is_compared(seed: int, compare_every: int) -> bool:
    """Whether a history on the fakes is played on moto too (the seed alone decides, as for the
    gate world, so a replay compares it again)."""
    return compare_every > 0 and (seed + 1) % compare_every == 0


def parting(on_fakes: tuple[str | None, list[str], Counter[str]],
            on_moto: tuple[str | None, list[str], Counter[str]]) -> str | None:
    """F1: where one history's story, violation or outcomes on the fakes part from the same
    history on moto (None: nowhere). The fakes then answer what the adapters do not."""
    for line, (fake, moto) in enumerate(zip(on_fakes[1], on_moto[1])):
        if fake != moto:
            return f"F1 the fakes and moto part at line {line}: fakes {fake!r}, moto {moto!r}"
    if len(on_fakes[1]) != len(on_moto[1]) or on_fakes[0] != on_moto[0]:
        return f"F1 the fakes and moto end apart: fakes {on_fakes[0] or 'ok'}, moto {on_moto[0] or 'ok'}"
    if on_fakes[2] != on_moto[2]:
        only_fakes, only_moto = on_fakes[2] - on_moto[2], on_moto[2] - on_fakes[2]
        return f"F1 the fakes and moto exercised different outcomes: {sorted(only_fakes.items())} on the " \
            f"fakes, {sorted(only_moto.items())} on moto"
    return None


def play(seed: int, steps: int, skip: tuple[str, ...], gate_every: int, compare_every: int
         ) -> tuple[str | None, list[str], Counter[str]]:
    """One history on the worker's store; on the fakes, every ``compare_every``-th one again on moto,
    where a difference is a violation (F1) reported with the story on the fakes."""
    def on(client: Any) -> tuple[str | None, list[str], Counter[str]]:
        if is_gate_history(seed, gate_every):
            return run_gate_history(seed, steps, client)
        return run_history(seed, steps, client, skip=skip)

    if _on_moto:
        return on(_client)
    on_fakes = on(None)
    if not is_compared(seed, compare_every):
        return on_fakes
    on_moto = on(_client)
    parted = parting(on_fakes, on_moto)
    log = on_fakes[2] + Counter({"compared on moto": 1})
    story = [*on_fakes[1], "-- played on moto too: " + (parted or "the same story")]
    return (parted or on_fakes[0]), story, log


def _batch(args: tuple[list[int], int, tuple[str, ...], int, int]
           ) -> list[tuple[int, str | None, list[str], Counter[str]]]:
    seeds, steps, skip, gate_every, compare_every = args
    return [(seed, *play(seed, steps, skip, gate_every, compare_every)) for seed in seeds]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make proof", description=__doc__.split("\n\n")[0])
    parser.add_argument("--histories", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=25, help="operations per history")
    parser.add_argument("--seed", type=int, default=None, help="base seed (default: a random one, printed)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--max-seconds", type=float, default=7200, help="stop starting histories after this")
    parser.add_argument("--every", type=int, default=500, help="progress line every N histories")
    parser.add_argument("--show", type=int, default=3, help="print the whole story of the first N violations")
    parser.add_argument("--skip", default="", help="operations to leave out, comma-separated (to look past a finding)")
    parser.add_argument("--only", default="", help="operations to run, comma-separated, leaving out all others")
    parser.add_argument("--store", choices=("fakes", "moto", "boto3"), default="fakes",
                        help="the table's fakes in memory (default); moto in process through the direct "
                        "client; boto3 over mock_aws")
    parser.add_argument("--compare-every", type=int, default=4,
                        help="on the fakes, every Nth history is played on moto too and must tell the same "
                        "story (0: none)")
    parser.add_argument("--outcomes", action="store_true",
                        help="print every outcome the run counted, with its count, at the end")
    parser.add_argument("--gate-every", type=int, default=5,
                        help="every Nth seed is a gate-world history (0: none; none with --only or --skip)")
    args = parser.parse_args(argv)
    from tests.correctness.gate_model import OPERATIONS as GATE_OPERATIONS
    from tests.correctness.model import OPERATIONS
    # A clock-derived base made runs started minutes apart share most of their seeds (base + k).
    base = args.seed if args.seed is not None else secrets.randbelow(1_000_000_000)
    skip = tuple(name for name in args.skip.split(",") if name)
    only = [name for name in args.only.split(",") if name]
    unknown = [name for name in skip + tuple(only) if name not in OPERATIONS]
    if unknown:
        parser.error(f"unknown operations {unknown}; known: {', '.join(OPERATIONS)}")
    if only:
        skip += tuple(name for name in OPERATIONS if name not in only)
    gate_every = 0 if skip else args.gate_every
    subset = f", only {args.only}" if only else f", without {args.skip}" if skip else ""
    gates = f", every {gate_every}th seed the gate world" if gate_every else ""
    compare_every = args.compare_every if args.store == "fakes" else 0
    compared = f", every {compare_every}th played on moto too" if compare_every else ""
    print(f"proof: {args.histories} histories x {args.steps} steps, base seed {base}, {args.workers} worker(s), "
          f"{STORES[args.store]}{compared}{subset}{gates}", flush=True)
    batch = 20 if args.histories >= 200 else 1
    replay = (f" STORE={args.store}" if args.store != "fakes" else "") + \
        (f" STEPS={args.steps}" if args.steps != 25 else "") + (f" ONLY={args.only}" if args.only else "") + \
        (f" SKIP={args.skip}" if args.skip else "")
    chunks = [(list(range(base + start, base + min(start + batch, args.histories))), args.steps, skip,
               gate_every, compare_every) for start in range(0, args.histories, batch)]
    started = time.monotonic()
    done, shown = 0, 0
    violations: list[tuple[int, str]] = []
    kinds: Counter[str] = Counter()
    coverage: Counter[str] = Counter()
    next_report = args.every
    single = args.histories == 1
    context = multiprocessing.get_context("fork")
    with context.Pool(args.workers, initializer=_setup, initargs=(args.store, compare_every)) as pool:
        results = pool.imap_unordered(_batch, chunks)
        for outcome in results:
            for seed, violation, story, log in outcome:
                done += 1
                coverage.update(log)
                if single:
                    print("\n".join(story))
                if violation is None:
                    continue
                violations.append((seed, violation))
                kinds[violation.split(" ", 1)[0]] += 1
                print(f"VIOLATION seed={seed}: {violation}\n  replay: make proof SEED={seed} HISTORIES=1{replay}",
                      flush=True)
                if shown < args.show and not single:
                    shown += 1
                    print("\n".join(f"    {line}" for line in story[-30:]), flush=True)
            elapsed = time.monotonic() - started
            if done >= next_report:
                next_report += args.every
                print(f"  {done} histories, {elapsed:.0f} s, {done / elapsed:.1f} histories/s, "
                      f"{len(violations)} violation(s)", flush=True)
            if elapsed > args.max_seconds and done < args.histories:
                print(f"  time bound of {args.max_seconds:.0f} s reached; stopping", flush=True)
                pool.terminate()
                break
    elapsed = time.monotonic() - started
    if kinds:
        print("violations by rule: " + ", ".join(f"{kind} x{count}" for kind, count in sorted(kinds.items())))
    if args.outcomes:
        print("outcomes: " + ", ".join(f"{name} {count}" for name, count in sorted(coverage.items())))
    owed = () if skip else OPERATIONS_REACHED + (FEATURE_PATHS if args.histories >= FEATURE_PATHS_FROM else ())
    quiet = [] if single else [name for name in owed if not coverage.get(name)] + \
        [name for name in OPERATIONS if name not in skip and not coverage.get(f"ran:{name}")] + \
        [f"gate:{name}" for name in (GATE_OPERATIONS if gate_every else ()) if not coverage.get(f"op:{name}")]
    print(f"exercised: {sum(coverage.values())} operations; never reached: {quiet or 'none'}")
    print(f"proof: {done} histories, {done * args.steps} steps, {len(violations)} violation(s), {elapsed:.0f} s, "
          f"{done / max(elapsed, 1e-9):.1f} histories/s, base seed {base}")
    if quiet:
        print(f"proof: FAILED: {len(quiet)} operation(s) or outcome(s) never reached; the run proves nothing "
              "about them (more HISTORIES, or ONLY/SKIP to look at the others)", flush=True)
    return 1 if violations or done < args.histories or quiet else 0


STORES = {"fakes": "the table's fakes", "moto": "moto direct", "boto3": "boto3/mock_aws"}
#: Outcomes every long run must reach, or the proof proves less than it claims.
OPERATIONS_REACHED = ("created", "replayed", "payment_started", "deliver:confirmed", "cancelled",
                      "capture_meets_reconciliation", "refund_long_after", "event_retried", "swept",
                      "executions_run", "waitlist_advance", "colliding_key", "stray_refund", "double_click_cancel",
                      "hoarded", "refused",
                      "cancel_while_paying")

#: The paths of orders, codes, comps, exchanges and transfers (issues 43, 45) a long run must reach,
#: read from the settled journals (``BookingModel.tally_paths``) and the operations' own outcomes.
FEATURE_PATHS: tuple[str, ...] = (
    # orders: held whole or refused whole, paid once, lapsed, paid late (retaken whole, or money back),
    # cancelled and refunded, their event cancelled, a line's ticket let in at its door
    "order_held", "order:seats_unavailable", "path:order:payment_succeeded", "path:order:hold_expired",
    "path:order:late_payment_places_retaken", "path:order:late_payment_refund_started",
    "path:order:cancelled_by_customer", "path:order:refund_succeeded", "path:order:event_cancelled_refund_started",
    "path:order:ticket_checked_in", "order_scan:admitted",
    # codes: used, used up, a use given back by a lapse, used by an order, paid, refunded
    "code_held", "code_used_up", "path:coded:hold_expired", "path:coded:order_held", "path:coded:payment_succeeded",
    "path:coded:refund_succeeded",
    # comps: a 100 % code, an order given, cancelled, released by the event's cancellation
    "comp_held", "order_given", "path:comp:comp_confirmed", "path:comp:comp_cancelled",
    "path:comp:event_cancelled_comp_released",
    # blocks: made, raced by a hold, ended, sold from, asked for more than they keep
    "blocked", "block:seats_unavailable", "unblocked", "sold_from_block", "from_block:not_in_block",
    # exchanges: moved, refused for taken places, an exchanged booking cancelled and refunded
    "exchanged", "exchange:seats_unavailable", "path:exchanged:refund_succeeded",
    # transfers: offered, accepted, withdrawn, an offer lapsed under the taker
    "transfer_offered", "transfer_accepted", "transfer_withdrawn", "accept:transfer_lapsed",
    "path:given:transfer_accepted",
)
#: Runs of fewer histories (a slice, a replay) are not held to them.
FEATURE_PATHS_FROM = 1000


if __name__ == "__main__":
    sys.exit(main())
