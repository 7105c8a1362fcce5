"""The doctor on runs from code it was not written against: six families, leave-one-family-out.

    OMP_NUM_THREADS=1 nice python bench/doctor_families.py [--seeds 0,1,2] [--out runs/doctor-families]
        [--workers 1] [--fresh] [--misses] [--held-out [--held-out-seeds 4]] [--habit H] [--audit]

Generates every case of ``bench/families`` (cached under ``--out``), diagnoses each log, and prints:

* **leave-one-family-out top-1** (the headline): for each family, the rules' tunable thresholds
  (:data:`GRID`) are chosen on the *other* five families (best top-1 minus false alarms), then the held-out
  family is scored with them; per label, every faulty run flagged at any rank, false alarms on healthy runs;
* the same with the shipped thresholds (in-sample: the author looked at all families);
* calibration: how often a finding with confidence >= 0.8 names the run's real label (a healthy run's
  finding is always wrong).

``--held-out`` instead scores, with the shipped thresholds only, the cases kept out of all tuning: the
held-out family (``HELD_OUT_FAMILIES`` in ``bench/families/tasks.py``, written before the rules were tuned)
at ``--seeds``, and the six tuned-on families at ``--held-out-seeds`` (default ``HELD_OUT_SEEDS``). Look at it
once, at the end: a figure that steered a change is no longer held out -- the next change needs seeds no run
of this script has used (``--seeds 5,6 --held-out-seeds 5`` after 0-2 and 4 were seen).

``--audit`` also prints the figures on the runs whose log shows their label (``bench/families/shown.py``:
a healthy recipe that did not learn or overfitted, a leak whose val loss never went below the floor, a
divergence that went NaN without rising first -- judged by plain criteria that share no statistic with the
rules), and lists the others with what the doctor said on them.

``--habit H`` rewrites every log as another logger would write its losses (``bench/log_habits.py``: the
validation loss carried forward on every record, a fixed schema with ``null`` placeholders, the training
loss as the running mean of its epoch or as a moving average, steps counted within the epoch, the facts in
a config dict, one record an epoch) into ``OUT-HABIT`` and diagnoses those: the figures should not move --
except where a habit hides the evidence (one record an epoch averages a within-epoch saw-tooth away).
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import multiprocessing
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.families.cases import Case, all_cases  # noqa: E402
from bench.log_habits import HABITS, relog_file  # noqa: E402
from chapters.doctor import diagnose  # noqa: E402

FINISHED = ".finished"
HELD_OUT_SEEDS = (4,)
# (module, constant) -> the values tried when tuning on the other families; the first is the shipped one.
GRID = {
    ("chapters.doctor.signals", "NOISE_UNITS"): (6.0, 4.0, 8.0),
    ("chapters.doctor.signals", "THRASH"): (0.1, 0.07, 0.15),
}


def generate_case(case: Case, out: Path) -> None:
    import torch

    torch.set_num_threads(1)
    from bench.families.train import generate

    directory = out / case.name
    (directory / FINISHED).unlink(missing_ok=True)
    generate(case, directory)
    (directory / FINISHED).touch()


def set_thresholds(values: dict) -> None:
    for (module, name), value in values.items():
        setattr(importlib.import_module(module), name, value)


def findings_of(cases, out: Path) -> dict[str, list[tuple[str, float]]]:
    result = {}
    for case in cases:
        result[case.name] = [(f.anomaly, f.confidence) for f in diagnose(out / case.name).findings]
    return result


def score(cases, found) -> tuple[int, int, int]:
    faulty = [c for c in cases if c.label]
    right = sum(bool(found[c.name]) and found[c.name][0][0] == c.label for c in faulty)
    alarms = sum(bool(found[c.name]) for c in cases if not c.label)
    return right, len(faulty), alarms


def table(cases, found) -> list[str]:
    lines = ["| label | runs | top-1 | any rank |", "|---|---|---|---|"]
    by_label = defaultdict(list)
    for case in cases:
        if case.label:
            by_label[case.label].append(case)
    for label, group in sorted(by_label.items()):
        top = sum(bool(found[c.name]) and found[c.name][0][0] == label for c in group)
        anywhere = sum(label in [a for a, _ in found[c.name]] for c in group)
        lines.append(f"| {label} | {len(group)} | {top}/{len(group)} = {top / len(group):.2f} | "
                     f"{anywhere}/{len(group)} |")
    healthy = [c for c in cases if not c.label]
    alarms = Counter(found[c.name][0][0] for c in healthy if found[c.name])
    lines.append(f"| healthy (false alarms) | {len(healthy)} | {sum(alarms.values())} "
                 f"{dict(alarms) if alarms else ''} | |")
    return lines


def calibration(cases, found, least=0.8) -> str:
    sure = [(c, a) for c in cases for a, conf in found[c.name] if conf >= least]
    right = sum(a == c.label for c, a in sure)
    return f"findings with confidence >= {least}: {right}/{len(sure)} = {right / max(1, len(sure)):.2f} name the real label"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/doctor-families"))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--misses", action="store_true", help="list every wrong top-1 and false alarm")
    parser.add_argument("--held-out", action="store_true", help="score only the cases kept out of tuning")
    parser.add_argument("--held-out-seeds", default=",".join(map(str, HELD_OUT_SEEDS)),
                        help="seeds of the six tuned-on families in --held-out")
    parser.add_argument("--audit", action="store_true",
                        help="also score only the runs whose log shows their label (bench/families/shown.py)")
    parser.add_argument("--habit", choices=HABITS, default="separate",
                        help="diagnose the logs as this logger writes the losses (bench/log_habits.py)")
    args = parser.parse_args()
    seeds = tuple(int(s) for s in args.seeds.split(","))
    cases = all_cases(seeds)
    if args.held_out:
        from bench.families.tasks import HELD_OUT_FAMILIES

        cases = all_cases(seeds, HELD_OUT_FAMILIES) + all_cases(tuple(int(s) for s in args.held_out_seeds.split(",")))
    started = time.perf_counter()
    missing = [c for c in cases if args.fresh or not (args.out / c.name / FINISHED).is_file()]
    if missing:
        with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(generate_case, missing, [args.out] * len(missing)))
    print(f"generated {len(missing)} of {len(cases)} logs in {time.perf_counter() - started:.0f} s")
    if args.habit != "separate":
        relogged = args.out.with_name(f"{args.out.name}-{args.habit}")
        for case in cases:
            for log in (args.out / case.name).glob("*.jsonl"):
                relog_file(log, relogged / case.name / log.name, args.habit)
        args.out = relogged

    if args.held_out:
        found = findings_of(cases, args.out)
        for family in sorted({c.family for c in cases}):
            right, total, alarms = score([c for c in cases if c.family == family], found)
            print(f"  {family:8s}: top-1 {right}/{total}, false alarms {alarms}")
        print_shipped("held out (shipped thresholds)", cases, found, args.misses)
        if args.audit:
            print_audit("held out (shipped thresholds)", cases, found, args.out)
        return 0

    shipped = {key: values[0] for key, values in GRID.items()}
    settings = [dict(zip(GRID, combo)) for combo in itertools.product(*GRID.values())]
    found_by_setting = []
    for setting in settings:
        set_thresholds(setting)
        found_by_setting.append(findings_of(cases, args.out))
    set_thresholds(shipped)
    found = found_by_setting[settings.index(shipped)]

    families = sorted({c.family for c in cases})
    held_found, lines = {}, []
    for family in families:
        others = [c for c in cases if c.family != family]
        held = [c for c in cases if c.family == family]

        def merit(index):
            right, total, alarms = score(others, found_by_setting[index])
            return right / max(1, total) - alarms / max(1, len(others))

        best = max(range(len(settings)), key=merit)
        held_found.update({c.name: found_by_setting[best][c.name] for c in held})
        right, total, alarms = score(held, found_by_setting[best])
        chosen = ", ".join(f"{name}={value}" for (_, name), value in settings[best].items())
        lines.append(f"  held out {family:8s}: top-1 {right}/{total} = {right / max(1, total):.2f}, false alarms "
                     f"{alarms}/{sum(not c.label for c in held)}  (tuned on the others: {chosen})")
    right, total, alarms = score(cases, held_found)
    per_family = [score([c for c in cases if c.family == f], held_found) for f in families]
    mean = sum(r / max(1, t) for r, t, _ in per_family) / len(families)
    print(f"\n## leave-one-family-out: top-1 {right}/{total} = {right / total:.2f} (mean over families {mean:.2f}); "
          f"false alarms {alarms}/{sum(not c.label for c in cases)}")
    print("\n".join(lines))
    print("\n" + "\n".join(table(cases, held_found)))
    print_shipped("shipped thresholds on every family (in-sample)", cases, found, args.misses)
    if args.audit:
        print_audit("leave-one-family-out", cases, held_found, args.out)
    return 0


def print_shipped(title: str, cases, found, misses: bool) -> None:
    """Top-1, false alarms, the per-label table and the calibration of the shipped thresholds."""
    right, total, alarms = score(cases, found)
    print(f"\n## {title}: top-1 {right}/{total} = {right / total:.2f}; "
          f"false alarms {alarms}/{sum(not c.label for c in cases)}")
    print("\n".join(table(cases, found)))
    print("\n## calibration (shipped thresholds): " + calibration(cases, found))
    if misses:
        print_misses(cases, found)


def print_audit(title: str, cases, found, out: Path) -> None:
    """The runs whose log does not show their recipe's label (:func:`bench.families.shown.not_shown`), what
    the doctor said on them, and the figures on the rest."""
    from bench.families.shown import not_shown

    unshown = {c.name: why for c in cases if (why := not_shown(c.label, out / c.name))}
    print(f"\n## audit: {len(unshown)} of {len(cases)} logs do not show their recipe's label")
    for case in cases:
        if case.name in unshown:
            said = ", ".join(a for a, _ in found[case.name]) or "healthy"
            print(f"   {case.name:36s} {unshown[case.name]}; the doctor: {said}")
    shown = [c for c in cases if c.name not in unshown]
    right, total, alarms = score(shown, found)
    print(f"## {title}, runs that show their label: top-1 {right}/{total} = {right / max(1, total):.2f}; "
          f"false alarms {alarms}/{sum(not c.label for c in shown)}")


def print_misses(cases, found) -> None:
    print()
    for case in cases:
        names = [a for a, _ in found[case.name]]
        if (names[:1] != [case.label]) if case.label else names:
            print(f"XX {case.name:36s} want {case.label or 'healthy':20s} got {', '.join(names) or 'healthy'}")


if __name__ == "__main__":
    sys.exit(main())
