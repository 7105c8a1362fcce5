"""Mystery runs: training logs with one fault each, and nothing in the log that names it.

The capstone exercise (``09_mystery_runs``) hands out logs like a colleague would: "this run went wrong,
what happened, and when?". They come from the doctor's benchmark (:mod:`chapters.labelled_runs`): the
MLP classifier, trained on the course Trainer, with one fault injected at a chosen step. Its logs are honest
except for one thing: the ``config`` in the ``run_start`` event is the recipe, and recipes differ by fault
(gradient clipping is on only in the ``grad_explosion`` one), which would let a rule name the fault from the
settings instead of the evidence; so :func:`write_mystery_logs` removes that one field. Everything else a
real log carries stays: the metric records, the ``lr``, the per-group gradient norms and update ratios, the
parameter counts, the ``nan`` and ``oom`` events.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from chapters.labelled_runs import Case, generate

# Faults whose evidence an MLP log shows within a few hundred steps.
MYSTERY_FAULTS = ("nan_loss", "divergence", "grad_explosion", "oom", "frozen_parameters", "loss_plateau")
STEPS = 400  # the benchmark MLP's run length
FIRST_ONSET, LAST_ONSET = 60, 300  # faults start somewhere in between: late enough to see a healthy start


def draw_cases(seed: int, count: int = 3) -> list[Case]:
    """``count`` different faults, each on its own data seed and starting at its own step."""
    rng = random.Random(seed)
    return [Case("mlp", fault, rng.randrange(10), onset_at=rng.randrange(FIRST_ONSET, LAST_ONSET))
            for fault in rng.sample(MYSTERY_FAULTS, count)]


def write_mystery_logs(seed: int, directory: Path, count: int = 3) -> list[Path]:
    """Train the drawn cases; returns ``directory/run-<n>/metrics.jsonl`` in order, with the recipe removed."""
    paths = []
    for number, case in enumerate(draw_cases(seed, count), 1):
        path = generate(case, Path(directory) / f"run-{number}")
        remove_recipe(path)
        paths.append(path)
    return paths


def remove_recipe(path: Path) -> None:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("event") == "run_start":
            record.pop("config", None)
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
