"""``nan_loss``: a loss that is NaN or infinite.

Statistic: the first step whose ``train_loss`` or ``val_loss`` was *written* non-finite (``NaN``,
``Infinity``, ``null``), a ``nan`` event, or a ``run_end`` with status ``failed`` whose ``error`` says a value
went non-finite (:func:`failed_non_finite`: a loop that checks ``torch.isfinite(loss)`` and raises, or a
framework that stops on NaN, ends the run *before* it logs the NaN). Threshold: one is enough -- a NaN is not
noise, and once the weights hold one every later step is NaN too. Why a rule at all: many loggers (Hugging
Face's default among them) filter NaN losses out of their curves; ours keep them, so the doctor can point at
the step.

The evidence names what the log shows just before: the last finite loss, the LR, and an LR that rose
several-fold in the two records before the NaN (:mod:`chapters.doctor.schedule`) -- the usual cause. A loss
that climbed far above the untrained level before it overflowed has a ``divergence`` finding too, listed
after this one: the label vocabulary's divergence is a climb *without* going non-finite, and once the loss
is NaN that is what the run shows (until 2026-12-03 the climb came first; every outside author who
labelled such a run called it ``nan_loss``).

One NaN is not the diagnosis: the one in a run's *last* training record when the run then ran out of memory
(:func:`last_record_before_oom`). The run ended on the OOM, and that is what must be fixed before anything
else can be seen; one NaN just before it says little (weights gone non-finite write NaN record after record,
and this run wrote no other). Outside runs whose batch doubled every few steps until the allocator gave up
wrote one such NaN (two PixelCNNs, 2026-12-06). Its confidence is lowered, so ``oom`` leads.
"""

from __future__ import annotations

import re

import numpy as np

from chapters.doctor.findings import Finding
from chapters.doctor.oom import ran_out
from chapters.doctor.schedule import LR_JUMP, lr_jump

LESSON = "docs/doctor.md#nan_loss"
# A NaN that was the run's last gasp before an OOM: true, but not what went wrong (see the module docstring).
LAST_GASP = 0.9
# How an error says a value went non-finite: "loss is nan", "returned nan values in its 0th output" (autograd's
# anomaly mode), "non-finite loss", "Infinity" -- as words, so that "nanoGPT" or "info" do not count.
NON_FINITE = re.compile(r"\bnan\b|\binf\b|infinit|non-?finite|not finite", re.IGNORECASE)


def check(run) -> list[Finding]:
    flags = run.nonfinite
    bad = (flags["train_loss"] | flags["val_loss"]).to_numpy()
    steps = run.all_rows["step"].to_numpy()
    stops = [e for e in run.events if e.get("event") == "nan" or failed_non_finite(e)]
    event_steps = [int(e["step"]) for e in stops if isinstance(e.get("step"), (int, float))
                   and not isinstance(e.get("step"), bool) and np.isfinite(e["step"])]
    if stops and not event_steps and len(steps):
        event_steps = [int(steps[-1])]  # a stop written without a step came after the last record
    if not bad.any() and not event_steps:
        return []
    candidates = event_steps + ([int(steps[bad][0])] if bad.any() else [])
    step = min(candidates)
    count = int(bad.sum())
    evidence = f"the loss is non-finite from step {step}"
    if count:
        evidence += f" ({count} of {len(bad)} records hold NaN/inf)"
    failures = [str(e["error"])[:160] for e in stops if e.get("event") == "run_end"]
    if failures and not count:
        evidence = f"the run failed at step {step} with {failures[0]!r}"
    finite = run.train[run.train["step"] < step]["train_loss"].dropna() if "train_loss" in run.train else []
    if len(finite):
        evidence += f"; the last finite train loss was {finite.iloc[-1]:.4g}"
    if "lr" in run.train:
        lr = run.train.loc[run.train["step"] <= step, "lr"].dropna()
        if len(lr):
            evidence += f" at lr {lr.iloc[-1]:.3g}"
        jump = lr_jump(run, step, around=2)
        if jump >= LR_JUMP:
            evidence += f", just after the learning rate rose x{jump:.0f}"
    confidence = 0.97
    if last_record_before_oom(run, step):
        confidence = LAST_GASP
        evidence += "; it is the run's last training record, and the run then ran out of memory"
    return [Finding(
        "nan_loss", confidence, step, evidence,
        fix="lower the peak learning rate or lengthen warmup, clip gradients; check the batch for empty "
            "labels or out-of-range ids; with fp16 use a GradScaler (or bf16)",
        experiment="replay the failing step from its saved batch and see which tensor goes non-finite first; "
                   "re-run with the learning rate / 10",
        lesson=LESSON)]


def last_record_before_oom(run, step: int) -> bool:
    """Is the first non-finite loss at ``step`` the run's last training record, with an OOM event after it?"""
    train_steps = run.train["step"].to_numpy() if "train_loss" in run.train else []
    ooms = [e.get("step") for e in run.events if ran_out(e)]
    return (len(train_steps) > 1 and step == train_steps[-1]
            and any(isinstance(s, (int, float)) and s >= step for s in ooms))


def failed_non_finite(event: dict) -> bool:
    """A ``run_end`` with status ``failed`` whose ``error`` says a value went non-finite (:data:`NON_FINITE`)."""
    error = event.get("error")
    return (event.get("event") == "run_end" and event.get("status") == "failed" and isinstance(error, str)
            and NON_FINITE.search(error) is not None)
