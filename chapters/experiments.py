"""The tuning loop: change one thing, compare against a baseline, and write it down.

Tuning by feel -- raise the learning rate *and* the batch size, see the loss improve, keep both -- teaches
nothing: which change helped? The discipline the best practitioners teach is three habits:

1. **One change at a time** against a fixed baseline run. Two changes at once give one outcome and no way to
   split it between them; the seed counts as a change too.
2. **Compare side by side**, and first say *what differs*. Every course run writes its full configuration in
   ``run_start``, so the difference between two runs is read from their logs, not remembered:
   :func:`compare` names the changed settings before it sets the outcomes next to each other, and
   :func:`chapters.plots.plot_comparison` draws the curves on the same panels.
3. **Keep a log of experiments**: one line per run -- what changed against which baseline, what came out,
   and a note of why you tried it. :class:`ExperimentLog` appends to a JSON Lines file and never rewrites
   it, so the failures stay in the record too (they are half of what you learned).

Know the noise before you trust an effect: the same configuration with another seed is itself an experiment
(:func:`compare` says so), and a gain smaller than the seed-to-seed difference is not a gain.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

from chapters.errors import MetricsLogError
from chapters.records.runlog import RunLog

ABSENT = "(absent)"  # a setting one run's config has and the other's has not


def run_config(log: RunLog) -> dict:
    """The run's configuration, from its (last) ``run_start``. Raises ``MetricsLogError`` without one."""
    config = log.run_start.get("config")
    if not isinstance(config, dict):
        raise MetricsLogError(f"{log.path}: no run_start with a config: not a run the course's trainer wrote")
    return config


def config_changes(baseline: dict, run: dict) -> dict[str, tuple]:
    """``{setting: (baseline value, run value)}`` for every setting that differs, in name order."""
    return {key: (baseline.get(key, ABSENT), run.get(key, ABSENT))
            for key in sorted(baseline.keys() | run.keys()) if baseline.get(key, ABSENT) != run.get(key, ABSENT)}


def best(log: RunLog, key: str) -> float | None:
    values = [v for v in log.series(key) if math.isfinite(v)]
    return min(values) if values else None


def last(log: RunLog, key: str) -> float | None:
    values = list(log.series(key))
    return values[-1] if values else None  # NaN kept: a run that ended NaN must not look finished


def outcome(log: RunLog) -> dict:
    """What a run came to: its status, last step, final and best validation loss, final training loss."""
    steps = log.all_rows["step"]
    return {"status": log.status, "steps": int(steps.max()) if len(steps) else 0,
            "final_val_loss": last(log, "val_loss"), "best_val_loss": best(log, "val_loss"),
            "final_train_loss": last(log, "train_loss")}


@dataclass
class Comparison:
    """Two runs: the settings that differ, and each one's outcome."""

    baseline: str
    run: str
    changes: dict[str, tuple]
    baseline_outcome: dict
    run_outcome: dict

    @property
    def verdict(self) -> str:
        """What the comparison can tell, given what changed."""
        names = list(self.changes)
        if not names:
            return "same configuration: any difference is nondeterminism (on one CPU there should be none)"
        if names == ["seed"]:
            return "only the seed changed: this difference is the run-to-run noise; smaller effects are not effects"
        if len(names) == 1:
            return f"one change ({names[0]}): the difference in outcome is its effect, give or take the seed noise"
        return (f"{len(names)} changes ({', '.join(names)}): the outcome cannot be put on any one of them; "
                "change one thing at a time")

    def to_json(self) -> dict:
        return {"run": self.run, "baseline": self.baseline,
                "changed": {key: list(pair) for key, pair in self.changes.items()}, "verdict": self.verdict,
                "outcome": self.run_outcome, "baseline_outcome": self.baseline_outcome}

    def describe(self) -> str:
        """The comparison as text: what differs first, then the outcomes side by side."""
        lines = [f"{self.run} vs baseline {self.baseline}"]
        lines += [f"  changed {key}: {old} -> {new}" for key, (old, new) in self.changes.items()]
        lines.append(f"  {self.verdict}")
        lines.append(f"  {'':18}{'baseline':>12}{'run':>12}")
        for key in ("status", "steps", "best_val_loss", "final_val_loss", "final_train_loss"):
            lines.append(f"  {key:18}{shown(self.baseline_outcome[key]):>12}{shown(self.run_outcome[key]):>12}")
        return "\n".join(lines)


def shown(value) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def compare(baseline_dir: str | Path, run_dir: str | Path) -> Comparison:
    """Compare a run with its baseline, both read from their ``metrics.jsonl``."""
    baseline, run = RunLog.load(baseline_dir), RunLog.load(run_dir)
    return Comparison(str(baseline_dir), str(run_dir), config_changes(run_config(baseline), run_config(run)),
                      outcome(baseline), outcome(run))


class ExperimentLog:
    """An append-only JSON Lines file, one line per experiment: run, baseline, changes, outcome, note."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def record(self, run_dir: str | Path, baseline_dir: str | Path, note: str = "") -> dict:
        """Compare ``run_dir`` with ``baseline_dir`` and append the result (with ``note``: why you tried it)."""
        return self.append(compare(baseline_dir, run_dir), note)

    def append(self, comparison: Comparison, note: str = "") -> dict:
        """Append a comparison already made (``clinic compare --log`` prints it too)."""
        entry = {"time": time.time(), **comparison.to_json(), "note": note}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as file:  # append: earlier experiments are never rewritten
            file.write(json.dumps(entry) + "\n")
        return entry

    def entries(self) -> list[dict]:
        """Every experiment so far, oldest first (none when the file does not exist yet)."""
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]
