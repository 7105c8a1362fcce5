"""What the doctor says: a :class:`Finding` per anomaly, and the label vocabulary (a contract).

The labels are the same strings everywhere -- ``clinic diagnose --json``, ``clinic train --stop-on``, the
scenarios' expected labels and docs/doctor.md -- so a label is never renamed, only added.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LABELS = (
    "nan_loss", "divergence", "grad_explosion", "vanishing_gradients", "loss_plateau", "no_shuffle",
    "frozen_parameters", "overfitting", "oscillation", "leakage", "throughput_drop", "memory_growth", "oom",
    "gpu_underutilised",
)


@dataclass
class Finding:
    """One anomaly: what it is, how sure we are, where it starts, the numbers behind it, and what to do.

    ``confidence`` is a ranking score in [0, 1], not a calibrated probability: each rule starts from a base
    that says how specific its evidence is (a NaN in the log is proof; a flat loss has many causes) and adds
    how far past its threshold the statistic went.
    """

    anomaly: str
    confidence: float
    step: int | None
    evidence: str
    fix: str
    experiment: str = ""  # the run that confirms the diagnosis
    lesson: str = ""  # where the course explains it
    caused_by: str = ""  # a cause the rule saw in the log itself ("lr": the LR rose at the onset); see rules.rank
    led_by: str = ""  # grad_explosion: "gradient" or "loss", whichever leads (gradients._led_by, _accumulating)

    def to_json(self) -> dict:
        return {"anomaly": self.anomaly, "confidence": round(self.confidence, 3), "step": self.step,
                "evidence": self.evidence, "fix": self.fix}


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)  # most likely first
    notes: list[str] = field(default_factory=list)  # about the log: skipped lines, resumed steps, fixed params

    @property
    def verdict(self) -> str:
        return "anomalous" if self.findings else "healthy"

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "findings": [f.to_json() for f in self.findings]}


def confidence(base: float, strength: float) -> float:
    """``base`` when the statistic just reaches its threshold (``strength`` = statistic / threshold = 1),
    rising towards 1 as it goes further past it."""
    excess = max(0.0, 1.0 - 1.0 / max(strength, 1.0))
    return round(min(0.99, base + (1.0 - base) * 0.5 * excess), 3)
