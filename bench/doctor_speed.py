"""How long the doctor takes on a 1,000,000-record log (goal: <= 3 s).

    python bench/doctor_speed.py [--records 1000000] [--repeats 3]

Writes a synthetic contract log (a run_start event, metric records with loss, lr, grad norm, throughput and
memory, an eval record every 100 steps) to a temporary file, then prints the median time of
``chapters.doctor.diagnose`` over the repeats, and of the whole ``clinic diagnose --json`` command
(Python start-up and imports included).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chapters.doctor import diagnose  # noqa: E402


def write_log(path: Path, records: int) -> None:
    with open(path, "w") as log:
        log.write(json.dumps({"event": "run_start", "step": 0, "config": {"lr": 1e-3}, "steps_per_epoch": 5000,
                              "loss_floor": 0.8, "total_params": 1000, "trainable_params": 1000}) + "\n")
        for step in range(1, records + 1):
            loss = 0.9 + 2.5 * math.exp(-step / 50_000) + 0.05 * math.sin(step * 12.9898) ** 2
            log.write(json.dumps({"step": step, "epoch": step // 5000, "timestamp": 1.7e9 + step * 0.1,
                                  "train_loss": loss, "lr": 1e-3, "grad_norm": 0.5 + 0.1 * math.cos(step),
                                  "tokens_per_sec": 50_000.0 + (step % 7), "cpu_memory_gb": 1.0}) + "\n")
            if step % 100 == 0:
                log.write(json.dumps({"step": step, "epoch": step // 5000, "timestamp": 1.7e9 + step * 0.1,
                                      "val_loss": loss + 0.02}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description="time the doctor on a large log")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "metrics.jsonl"
        write_log(path, args.records)
        size_mb = path.stat().st_size / 1e6
        inside, cpu, whole = [], [], []
        for _ in range(args.repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            verdict = diagnose(path).verdict
            inside.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "chapters.cli", "diagnose", str(path), "--json"], check=True,
                           capture_output=True, env={"PYTHONPATH": str(REPO), "PATH": ""})
            whole.append(time.perf_counter() - started)
    print(f"{args.records:,} metric records ({size_mb:.0f} MB), verdict {verdict}")
    print(f"diagnose(): median {statistics.median(inside):.2f} s over {args.repeats} "
          f"(min {min(inside):.2f}, max {max(inside):.2f}); ratio to the 3 s goal {statistics.median(inside) / 3:.2f}")
    print(f"diagnose() CPU time of this process: median {statistics.median(cpu):.2f} s "
          f"(differs from wall time when other jobs share the cores: compare with os.getloadavg() "
          f"{os.getloadavg()[0]:.1f})")
    print(f"clinic diagnose --json (with start-up): median {statistics.median(whole):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
