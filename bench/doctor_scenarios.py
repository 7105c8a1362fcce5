"""The doctor on the course's own scenarios, several seeds: does it name each broken run's label first,
and stay silent on the fixed runs?

    python bench/doctor_scenarios.py [--seeds 0,1,2] [--out DIR]

Every scenario's broken run (each CPU-possible nan cause but ``bad_token_ids``, which crashes before any
metric moves) counts as faulty with the scenario's ``LABEL``; every fixed run, and the healthy scenario,
counts as healthy. Prints top-1 accuracy on faulty runs, false alarms on healthy ones, and the misses.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path

from chapters.doctor import diagnose
from chapters.scenarios import SCENARIOS, nan
from chapters.scenarios.base import Options
from chapters.scenarios.runner import run_variant

NOT_VISIBLE_IN_METRICS = {"bad_token_ids"}


def jobs(seed: int):
    for sid, scenario in SCENARIOS.items():
        causes = [c for c in nan.CAUSES if c not in NOT_VISIBLE_IN_METRICS] if sid == "nan" else [None]
        for cause in causes:
            options = Options(seed=seed, device="cpu", cause=cause)
            if sid == "nan" and nan.skip_reason(options):
                continue
            yield sid, scenario, options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", type=Path, help="where the runs go (default: a new temporary folder)")
    args = parser.parse_args()
    args.out = args.out or Path(tempfile.mkdtemp(prefix="doctor-scenarios-"))
    faulty_hits, faulty_total, alarms, healthy_total, misses = 0, 0, 0, 0, []
    for seed in (int(s) for s in args.seeds.split(",")):
        for sid, scenario, options in jobs(seed):
            name = f"{sid}{'-' + options.cause if options.cause else ''}-s{seed}"
            variants = ["fixed"] + (["broken"] if scenario.EXPECT_SYMPTOM else [])
            for variant in variants:
                run_dir = args.out / name / variant
                run_variant(sid, variant, dataclasses.replace(options), run_dir)
                found = [f.anomaly for f in diagnose(run_dir).findings]
                if variant == "broken":
                    faulty_total += 1
                    hit = found[:1] == [scenario.LABEL]
                    faulty_hits += hit
                    if not hit:
                        misses.append(f"{name} broken: expected {scenario.LABEL}, got {found or 'nothing'}")
                else:
                    healthy_total += 1
                    if found:
                        alarms += 1
                        misses.append(f"{name} {variant}: false alarm {found}")
    print(f"scenario logs, seeds {args.seeds}: top-1 on faulty runs {faulty_hits}/{faulty_total} = "
          f"{faulty_hits / faulty_total:.2f}; false alarms on healthy runs {alarms}/{healthy_total}")
    for line in misses:
        print("  miss:", line)


if __name__ == "__main__":
    main()
