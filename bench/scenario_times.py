"""Seconds per scenario (broken + fixed, plots included) and for the whole of ``clinic reproduce all``.

    python bench/scenario_times.py [--repeats 3] [--out /tmp/scenario-times]

Goal (issue 4): each scenario <= 30 s on 2 CPU cores, ``clinic reproduce all`` <= 4 min. With several
repeats the table shows the median of each scenario's time.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

from chapters.scenarios import SCENARIOS, nan
from chapters.scenarios.base import Options
from chapters.scenarios.runner import reproduce


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, help="where the runs go (default: a new temporary folder)")
    args = parser.parse_args()
    args.out = args.out or Path(tempfile.mkdtemp(prefix="scenario-times-"))
    options = Options(device="cpu")
    jobs = [(sid, options) for sid in SCENARIOS if sid != "nan"]
    jobs += [("nan", dataclasses.replace(options, cause=c)) for c in nan.CAUSES
             if nan.skip_reason(dataclasses.replace(options, cause=c)) is None]
    seconds: dict[str, list[float]] = {}
    totals = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        for sid, job_options in jobs:
            outcome = reproduce(sid, job_options, args.out / sid / str(job_options.cause))
            assert outcome.passed, f"{sid} {job_options.cause}: {outcome}"
            seconds.setdefault(f"{sid} ({job_options.cause})" if job_options.cause else sid, []).append(outcome.seconds)
        totals.append(time.perf_counter() - start)
    print(f"{'scenario':<26} median seconds (broken + fixed + plots), {args.repeats} repeat(s), CPU")
    for name, values in seconds.items():
        print(f"{name:<26} {statistics.median(values):6.1f}")
    all_ids = [name for name in seconds if not name.startswith("nan (") or name == f"nan ({nan.DEFAULT_CAUSE})"]
    print(f"{'reproduce all (sum)':<26} {sum(statistics.median(seconds[n]) for n in all_ids):6.1f}  (goal <= 240)")
    print(f"{'every job incl. nan causes':<26} {statistics.median(totals):6.1f}")


if __name__ == "__main__":
    main()
