"""The doctor's label on the same faulty runs, read from our JSONL and from each other tool's format.

Runs: the doctor's labelled benchmark (``bench/labelled_cases.py``: an MLP classifier with one fault
injected the way it happens in real code, seeds 0-2, and the course GPT through the course Trainer, seed 0),
for the faults NaN, divergence, plateau and overfitting plus healthy runs. Each run's records are then
written again through the real writers of TensorBoard (``SummaryWriter``), the HF Trainer
(``TrainerState.save_to_json``) and Lightning (``CSVLogger``), with those tools' key names
(``tests/byor_writers.py``), and each copy is diagnosed. Logs cached in ``runs/bench-byor-labels/``.

    OMP_NUM_THREADS=1 PYTHONPATH=. python bench/byor_labels.py

Prints one row per run: the top label from each format, and whether it equals the JSONL twin's.
"""

from __future__ import annotations

import os
from pathlib import Path

from bench.labelled_cases import GPT_FAULTS, GptCase, generate
from chapters.labelled_runs import Case
from chapters.doctor.rules import diagnose_run
from chapters.records.formats.detect import load
from tests.byor_writers import WRITERS, available

FAULTS = ["nan_loss", "divergence", "loss_plateau", "overfitting", "healthy"]
CASES = [Case("mlp", fault, seed) for seed in (0, 1, 2) for fault in FAULTS] + \
        [GptCase(fault, 0) for fault in FAULTS if fault in GPT_FAULTS]


def top_label(path, format="auto") -> str:
    findings = diagnose_run(load(path, format)[0]).findings
    return findings[0].anomaly if findings else "healthy"


def main() -> None:
    root = Path("runs") / "bench-byor-labels"
    formats = [name for name in WRITERS if available(name)]
    print(f"| run | expected | jsonl | {' | '.join(formats)} |")
    print(f"|---|---|---|{'---|' * len(formats)}")
    same = total = 0
    for case in CASES:
        folder = root / f"{case.family}-{case.fault}-{case.seed}"
        log = folder / "jsonl" / "metrics.jsonl"
        if not log.is_file():
            log = generate(case, folder / "jsonl")
        twin = top_label(log)
        labels = []
        for name in formats:
            copy = folder / name
            if not copy.exists():
                WRITERS[name](log, copy)
            labels.append(top_label(copy))
            same += labels[-1] == twin
            total += 1
        print(f"| {case.family} seed {case.seed} | {case.label or 'healthy'} | {twin} | {' | '.join(labels)} |")
    missing = [name for name in WRITERS if name not in formats]
    print(f"\nsame label as the JSONL twin: {same}/{total}"
          + (f" (not installed, skipped: {', '.join(missing)})" if missing else "")
          + f"; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
