"""The doctor's rule book: every rule, and how their findings are ranked.

A rule is a module with ``check(run) -> list[Finding]``. Adding one is one module and one line in
``RULES``. Findings are ranked most likely first by confidence; ties go to the earlier step, because the
first thing that went wrong usually caused the rest (an exploding gradient comes before the NaN).
"""

from __future__ import annotations

from chapters.doctor import (divergence, frozen, gradients, leakage, memory, nan, no_shuffle, oom, oscillation,
                             overfitting, plateau, throughput)
from chapters.doctor.findings import Diagnosis, Finding
from chapters.doctor.loader import RunLog

RULES = [nan, oom, leakage, frozen, no_shuffle, gradients, divergence, overfitting, memory, throughput,
         oscillation, plateau]


def rank(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (-f.confidence, f.step if f.step is not None else -1))


def diagnose_run(run: RunLog) -> Diagnosis:
    findings = [finding for rule in RULES for finding in rule.check(run)]
    return Diagnosis(rank(findings), list(run.notes))
