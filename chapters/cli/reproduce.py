"""``clinic reproduce``: every classic failure, broken and fixed, judged from its own logs."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from tqdm.auto import tqdm

from chapters.cli.args import seed, writable_dir
from chapters.core.devices import resolve_device
from chapters.errors import DeviceError, ScenarioError, UsageError
from chapters.scenarios import SCENARIOS, nan
from chapters.scenarios.base import Options
from chapters.scenarios.runner import reproduce


def add_parser(verbs) -> None:

    parser = verbs.add_parser("reproduce", help="reproduce training failures and their fixes")
    parser.add_argument("scenario", choices=[*SCENARIOS, "all"], metavar="SCENARIO",
                        help=f"one of: {', '.join(SCENARIOS)}, or all")
    parser.add_argument("--cause", help="nan only: lr_spike, all_ignored_labels, bad_token_ids, fp16_no_scaler, or all")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")
    parser.add_argument("--out", type=writable_dir, default=Path("runs/reproduce"), help="output directory")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.set_defaults(run=run)


def run(args) -> int:

    try:
        device = resolve_device(args.device)
    except DeviceError as err:
        raise UsageError(err) from None
    if args.cause is not None and args.scenario != "nan":
        raise UsageError(f"--cause applies to the nan scenario only, not {args.scenario!r}")
    if args.cause not in (None, "all", *nan.CAUSES):
        raise UsageError(f"unknown cause {args.cause!r} (accepted: {', '.join(nan.CAUSES)}, all)")

    options = Options(seed=args.seed, device=str(device))
    jobs = []  # (scenario id, options, output directory)
    for scenario_id in (SCENARIOS if args.scenario == "all" else [args.scenario]):
        if scenario_id == "nan" and args.cause == "all":
            jobs += [("nan", dataclasses.replace(options, cause=c), args.out / "nan" / c) for c in nan.CAUSES]
        elif scenario_id == "nan":
            cause = args.cause or nan.DEFAULT_CAUSE
            jobs.append(("nan", dataclasses.replace(options, cause=cause), args.out / "nan"))
        else:
            jobs.append((scenario_id, options, args.out / scenario_id))

    report = sys.stderr if args.json else sys.stdout  # with --json, stdout holds the document only
    outcomes, failed = [], []
    bar = tqdm(jobs, desc="scenarios", unit="scenario", file=sys.stderr)
    for scenario_id, job_options, out_dir in bar:
        try:
            outcome = reproduce(scenario_id, job_options, out_dir,
                                report=lambda line: bar.write(line, file=sys.stderr))
        except ScenarioError as err:  # not the user's doing: named, counted as not reproduced, and on we go
            bar.write(f"clinic reproduce: {err}", file=sys.stderr)
            failed.append({"id": scenario_id, "cause": job_options.cause, "error": str(err)})
            continue
        bar.write(f"{format_table([outcome]).splitlines()[1]}", file=sys.stderr)
        outcomes.append(outcome)
    print(format_table(outcomes), file=report)
    if args.json:
        print(json.dumps({"scenarios": [
            {"id": o.id, "cause": o.cause, "device": o.device, "broken_symptom": o.broken_symptom,
             "fixed_symptom": o.fixed_symptom, "seconds": round(o.seconds, 2),
             **({"skipped": o.skipped} if o.skipped else {})} for o in outcomes],
            **({"failed_to_run": failed} if failed else {})}))
    return 0 if all(o.passed for o in outcomes) and not failed else 1


def format_table(outcomes) -> str:
    yes_no = {True: "yes", False: "no", None: "-"}
    rows = [("scenario", "symptom in broken", "cleared in fixed", "seconds")]
    for o in outcomes:
        name = o.id + (f" ({o.cause})" if o.cause else "")
        cleared = None if o.fixed_symptom is None else not o.fixed_symptom
        rows.append((name, yes_no[o.broken_symptom], yes_no[cleared],
                     f"skipped: {o.skipped}" if o.skipped else f"{o.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}" for r in rows)
