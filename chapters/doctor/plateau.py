"""``loss_plateau``: the run is not learning.

Statistic: relative drop of the smoothed train loss, from its start level (median of the first 10 % of
points) to its best smoothed value. Threshold: less than ``MIN_DROP``. With a known ``loss_floor`` we also
accept a run that started near the floor (nothing left to learn) as healthy. Why: any working setup cuts a
random model's loss by far more than 10 % within a few hundred steps; a flat line means the updates are too
small (learning rate 100-1000x too low), the network is dead, or the labels carry no signal (a label bug).
A log that starts late (a resumed run's tail) cannot tell "stuck" from "converged", so it needs a floor.
"""

from __future__ import annotations

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import smooth, start_level, window_for

MIN_DROP = 0.1
LESSON = "docs/doctor.md#loss_plateau"


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    if len(loss) < 8 or run.nonfinite["train_loss"].any():
        return []
    start = start_level(loss)
    best = float(smooth(loss, window_for(len(loss))).min())
    floor = run.info("loss_floor")
    starts_late = loss.index[0] > max(50, 0.1 * loss.index[-1])
    if start <= 0 or (starts_late and floor is None):
        return []
    if floor is not None and best <= floor * 1.1 + 0.02:
        return []  # at the floor: converged, not stuck
    drop = (start - best) / start
    if drop >= MIN_DROP:
        return []
    evidence = (f"train loss went from {start:.4g} to at best {best:.4g} ({drop:.1%} lower) over "
                f"{int(loss.index[-1] - loss.index[0])} steps")
    if floor is not None:
        evidence += f"; the loss floor is {floor:.4g}"
    return [Finding("loss_plateau", confidence(0.5, MIN_DROP / max(drop, 1e-3)), int(loss.index[0]), evidence,
                    fix="raise the learning rate (LR range test), check that labels match inputs and that "
                        "activations are not dead; check the data pipeline feeds real labels",
                    experiment="overfit one batch: 100 steps on a single batch must drive its loss near 0",
                    lesson=LESSON)]
