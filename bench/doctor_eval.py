"""Score the doctor on its labelled benchmark (bench/labelled_cases.py, chapters/labelled_runs.py).

    OMP_NUM_THREADS=1 python bench/doctor_eval.py [--out runs/doctor-bench] [--seeds 0,1,2]
        [--scenario-seeds 0,4] [--workers 2] [--fresh]

Generates every case -- MLP and GRU runs with one injected fault each, course-GPT runs through the Trainer,
and every course scenario's broken and fixed runs (``chapters.scenarios``) -- diagnoses each log, and
prints: top-1 accuracy on faulty runs, false alarms on healthy runs, per-label precision / recall, and
detection delay in steps (finding's step - the step the fault started).

Logs are cached: a case whose folder under ``--out`` (git-ignored) holds a finished log is not run again;
``--fresh`` regenerates everything (do it after changing a recipe or a scenario).

Split: thresholds were set looking at the *tuning* part (MLP seeds 0 and 1, scenario seeds 0-3); the rest
-- MLP seed 2, every GRU and GPT run, scenario seeds 4 and above -- is *held out*, and reported separately.
"""

from __future__ import annotations

import argparse
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chapters.doctor import diagnose  # noqa: E402
from bench.labelled_cases import all_cases, generate, onset, scenario_cases  # noqa: E402

TUNING_SCENARIO_SEEDS = (0, 1, 2, 3)  # the scenario seeds looked at while the rules were tuned
FINISHED = ".finished"  # written after a case's run returns: a killed benchmark leaves no half log to reuse


def generate_case(case, out: Path) -> None:
    directory = out / case.name
    (directory / FINISHED).unlink(missing_ok=True)
    generate(case, directory)
    (directory / FINISHED).touch()


def score_case(case, out: Path) -> dict:
    diagnosis = diagnose(out / case.name)
    found = [f.anomaly for f in diagnosis.findings]
    hit = next((f for f in diagnosis.findings if f.anomaly == case.label), None)
    return {"case": case, "found": found, "top": found[0] if found else None,
            "delay": (hit.step - onset(case)) if hit is not None and hit.step is not None else None}


def held_out(case) -> bool:
    if case.family == "scenario":
        return case.seed not in TUNING_SCENARIO_SEEDS
    return not (case.family == "mlp" and case.seed in (0, 1))


def summary(results: list[dict], title: str) -> list[str]:
    faulty = [r for r in results if r["case"].label]
    healthy = [r for r in results if not r["case"].label]
    correct = sum(r["top"] == r["case"].label for r in faulty)
    alarms = sum(bool(r["found"]) for r in healthy)
    lines = [f"### {title}: {len(results)} runs",
             f"top-1 accuracy on faulty runs: {correct}/{len(faulty)} = {correct / max(1, len(faulty)):.2f}; "
             f"false alarms on healthy runs: {alarms}/{len(healthy)}", "",
             "| label | runs | precision (top-1) | recall (top-1) | recall (any rank) | median delay (steps) |",
             "|---|---|---|---|---|---|"]
    labels = sorted({r["case"].label for r in faulty})
    predicted = Counter(r["top"] for r in results if r["top"])
    for label in labels:
        cases = [r for r in faulty if r["case"].label == label]
        hits = sum(r["top"] == label for r in cases)
        anywhere = sum(label in r["found"] for r in cases)
        delays = [r["delay"] for r in cases if r["delay"] is not None]
        precision = hits / predicted[label] if predicted[label] else float("nan")
        lines.append(f"| {label} | {len(cases)} | {precision:.2f} | {hits / len(cases):.2f} | "
                     f"{anywhere / len(cases):.2f} | {statistics.median(delays) if delays else '-'} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/doctor-bench"))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--gpt-seeds", default="0")
    parser.add_argument("--scenario-seeds", default="0,4")
    parser.add_argument("--families", default="mlp,gru,gpt,scenario")
    parser.add_argument("--fresh", action="store_true", help="regenerate logs even when cached")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds = tuple(int(s) for s in args.seeds.split(","))
    gpt_seeds = tuple(int(s) for s in args.gpt_seeds.split(",")) if args.gpt_seeds else ()
    scenario_seeds = tuple(int(s) for s in args.scenario_seeds.split(",")) if args.scenario_seeds else ()
    families = set(args.families.split(","))
    cases = [c for c in all_cases(seeds, gpt_seeds) + scenario_cases(scenario_seeds) if c.family in families]
    # One fresh process per run, as in real training: memory freed by an earlier run would otherwise be
    # reused by the next one and hide its growth from the process's RSS. The workers are not daemons, so
    # scenarios that run in a child process of their own (oom, memory_leak) can start it.
    started = time.perf_counter()
    missing = [c for c in cases if args.fresh or not (args.out / c.name / FINISHED).is_file()]
    if missing:
        with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn"),
                                 max_tasks_per_child=1) as pool:
            list(pool.map(generate_case, missing, [args.out] * len(missing)))
    print(f"generated {len(missing)} of {len(cases)} logs in {time.perf_counter() - started:.0f} s")
    results = [score_case(case, args.out) for case in cases]
    for r in results:
        mark = "ok " if (r["top"] == r["case"].label) else "XX "
        print(f"{mark}{r['case'].name:38s} -> {', '.join(r['found']) or 'healthy'}")
    print()
    scenarios = [r for r in results if r["case"].family == "scenario"]
    others = [r for r in results if r["case"].family != "scenario"]
    for title, part in (("all", results),
                        ("tuning part (MLP seeds 0, 1; scenario seeds 0-3)", [r for r in results if not held_out(r["case"])]),
                        ("held out", [r for r in results if held_out(r["case"])]),
                        ("course scenarios only", scenarios),
                        ("MLP, GRU and GPT fault injections only", others)):
        if not part:
            continue
        print("\n".join(summary(part, title)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
