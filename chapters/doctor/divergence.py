"""``divergence``: the training loss climbs far above where it started, without becoming NaN.

Statistic: the train-loss curve smoothed by a rolling median, compared with its *start level* (median of
the first 10 % of points). Threshold: the smoothed loss stays at or above ``RISE`` x the start level for a
sustained stretch, or -- after the run had learned (smoothed loss below half the start) -- comes back to
``RELAPSE`` x the start. Why: a random model's loss is the worst a sane run sees; an optimizer that pushes
it higher is being thrown out of the basin (learning rate too high for the curvature).

A run whose loss rose like that but then fell back and *ended* below its start
(:data:`oscillation.FELL_BACK`) is not diverging: it was thrown out of the valley and fell back in, and
:mod:`chapters.doctor.oscillation` reports that swing.
"""

from __future__ import annotations

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.oscillation import fell_back
from chapters.doctor.signals import first_sustained, smooth, start_level, window_for

RISE = 1.5
RELAPSE = 0.9
LESSON = "docs/doctor.md#divergence"


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    if len(loss) < 6:
        return []
    start = start_level(loss)
    if start <= 0:
        return []
    smoothed = smooth(loss, window_for(len(loss)))
    sustained = max(3, len(loss) // 50)
    step = first_sustained(smoothed >= RISE * start, sustained)
    if step is not None and not fell_back(smoothed, start):
        peak = float(smoothed.max())
        return [_finding(step, confidence(0.7, peak / (RISE * start)),
                         f"train loss rose from {start:.4g} at the start to {peak:.4g} (x{peak / start:.1f}) "
                         f"and stayed above x{RISE} from step {step}")]
    learned = smoothed[smoothed < 0.5 * start]
    if len(learned):
        after = smoothed.loc[learned.index[0]:]
        step = first_sustained(after >= RELAPSE * start, sustained)
        if step is not None:
            return [_finding(step, 0.6, f"train loss fell to {learned.min():.4g}, then climbed back to "
                                        f"{after.loc[step:].max():.4g} (start {start:.4g}) from step {step}")]
    return []


def _finding(step, score, evidence) -> Finding:
    return Finding("divergence", score, int(step), evidence,
                   fix="lower the learning rate (2-10x), add or lengthen warmup, clip gradients at 1.0",
                   experiment="LR range test: short runs at LRs a factor 3 apart; keep the largest that falls "
                              "smoothly",
                   lesson=LESSON)
