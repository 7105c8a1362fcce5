"""``divergence``: the training loss climbs far above where it started, without becoming NaN.

Statistic: the train-loss curve smoothed by a rolling median, compared with the *untrained reference*
(:func:`signals.reference_level`: ln V or ln K when ``run_start`` declares ``vocab_size`` /
``num_classes``, else the first record). Threshold: the smoothed loss stays above the reference by a
factor of at least ``RISE`` *and* by at least ``NOISE_UNITS`` of the smoothed curve's own noise (on a log
scale) for a sustained stretch (``max(3, 2 %)`` of the records); or -- after the run had learned (smoothed
loss below half the reference) -- comes back to ``RELAPSE`` x the reference; or one record at ``BLOWUP`` (10) x the reference after which the run never
gets below the reference again (:func:`signals.blew_up`). Why: a random model's loss
is the worst a sane run sees; an optimizer that pushes it higher is being thrown out of the basin
(learning rate too high for the curvature). Why the declared reference: an LR far too high can throw the
loss up between the first and the second record, so a start level taken from the first records would be
measured after the jump. Why noise units: with the first record as reference, a small-batch run's first
record can be 50 % off, and its later records swing as much.

A run that came back to the reference and *sits* there with collapsed gradients is a dead network, which
:func:`plateau.dead_network` reports as ``loss_plateau``; the relapse branch leaves it to that rule.

A run whose loss rose like that but then fell back and *ended* below its start
(:data:`oscillation.FELL_BACK`) is not diverging: it was thrown out of the valley and fell back in, and
:mod:`chapters.doctor.oscillation` reports that swing.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-11-30): divergence
20/36 top-1 (27/36 at any rank); all labels 203/243, 2/90 false alarms (docs/doctor.md).
"""

from __future__ import annotations

import math

import numpy as np

from chapters.doctor import signals
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.oscillation import fell_back, thrashing
from chapters.doctor.plateau import dead_network
from chapters.doctor.signals import blew_up, first_sustained, noise_scale, reference_level, smooth, window_for

RISE = 1.5
RELAPSE = signals.RELAPSE
LESSON = "docs/doctor.md#divergence"


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    if len(loss) < 6:
        return []
    loss = loss[loss > 0]
    if len(loss) < 6:
        return []
    start = reference_level(run, loss)
    if start <= 0:
        return []
    smoothed = smooth(loss, window_for(len(loss)))
    sustained = max(3, len(loss) // 50)
    if thrashing(loss, start):
        return []  # swinging around the untrained level for the whole run: oscillation reports it
    exploded = blew_up(loss, start)
    if exploded is not None:
        peak = float(loss.max())
        return [_finding(exploded, confidence(0.7, peak / (signals.BLOWUP * start)),
                         f"train loss hit {peak:.4g} at step {int(loss.idxmax())}, x{peak / start:.0f} what an "
                         f"untrained model scores ({start:.4g}), and never got below that level again")]
    step = first_sustained(smoothed >= rise_limit(loss, start), sustained)
    if step is not None and not fell_back(smoothed, start):
        peak = float(smoothed.max())
        return [_finding(step, confidence(0.7, peak / (RISE * start)),
                         f"train loss rose from {start:.4g} at the start to {peak:.4g} (x{peak / start:.1f}) "
                         f"and stayed above x{RISE} from step {step}")]
    learned = smoothed[smoothed < 0.5 * start]
    if len(learned):
        after = smoothed.loc[learned.index[0]:]
        step = first_sustained(after >= RELAPSE * start, sustained)
        if step is not None and not dead_network(run, loss, start):
            return [_finding(step, 0.6, f"train loss fell to {learned.min():.4g}, then climbed back to "
                                        f"{after.loc[step:].max():.4g} (start {start:.4g}) from step {step}")]
    return []


def rise_limit(loss, reference: float) -> float:
    """The level the smoothed loss must pass to count as risen: ``RISE`` x the reference, or more on a noisy
    run -- ``NOISE_UNITS`` x the smoothed curve's noise (one record's log-scale noise / sqrt(window))."""
    noise = noise_scale(np.log(loss)) / math.sqrt(window_for(len(loss)))
    return reference * max(RISE, math.exp(signals.NOISE_UNITS * noise))


def _finding(step, score, evidence) -> Finding:
    return Finding("divergence", score, int(step), evidence,
                   fix="lower the learning rate (2-10x), add or lengthen warmup, clip gradients at 1.0",
                   experiment="LR range test: short runs at LRs a factor 3 apart; keep the largest that falls "
                              "smoothly",
                   lesson=LESSON)
