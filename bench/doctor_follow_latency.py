"""How fast does ``clinic diagnose --follow`` react? Seconds from a NaN record being written to the finding.

    python bench/doctor_follow_latency.py [--repeats 7] [--records 500]

Each repeat writes a healthy-looking log of ``--records`` records, starts the same ``follow`` loop the CLI
uses in a thread, appends one record with a NaN loss, and times how long until ``nan_loss`` is reported.
Goal (issue 5): within 1 s. Prints the median and the worst repeat.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import threading
import time
from pathlib import Path

from chapters.doctor.live import follow


def healthy_log(path: Path, records: int) -> None:
    lines = [json.dumps({"event": "run_start", "step": 0, "timestamp": 0.0})]
    for step in range(1, records + 1):
        lines.append(json.dumps({"step": step, "epoch": 0, "timestamp": float(step),
                                 "train_loss": 3.0 * math.exp(-step / 100) + 1.0, "lr": 1e-3,
                                 "grad_norm": 1.0, "tokens_per_sec": 1e5}))
    path.write_text("\n".join(lines) + "\n")


def one_latency(records: int) -> float:
    with tempfile.TemporaryDirectory() as run_dir:
        path = Path(run_dir) / "metrics.jsonl"
        healthy_log(path, records)
        seen = threading.Event()
        reported_at = []

        def on_findings(diagnosis, new):
            if any(f.anomaly == "nan_loss" for f in new):
                reported_at.append(time.perf_counter())
                seen.set()

        watcher = threading.Thread(target=follow, args=(path, on_findings), kwargs={"idle_timeout": 5.0},
                                   daemon=True)
        watcher.start()
        time.sleep(1.0)  # let the watcher read the healthy log first (setup, not the measured interval)
        with open(path, "a") as log:
            written_at = time.perf_counter()
            log.write(json.dumps({"step": records + 1, "epoch": 0, "timestamp": float(records + 1),
                                  "train_loss": math.nan, "lr": 1e-3}) + "\n")
        if not seen.wait(timeout=10):
            raise RuntimeError("the NaN was not reported within 10 s")
        watcher.join()
        return reported_at[0] - written_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--records", type=int, default=500)
    args = parser.parse_args()
    latencies = [one_latency(args.records) for _ in range(args.repeats)]
    print(f"--follow reaction to a NaN record ({args.records}-record log, {args.repeats} repeats): "
          f"median {statistics.median(latencies):.3f} s, worst {max(latencies):.3f} s (goal <= 1 s)")


if __name__ == "__main__":
    main()
