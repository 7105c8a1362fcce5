"""``loss_plateau``: the run is not learning -- it never did, or its network died.

Never learned. Statistic: relative drop of the smoothed train loss, from the untrained reference
(:func:`signals.reference_level`: ln V / ln K when declared, else the first record) to its best smoothed
value. Threshold: less than ``MIN_DROP``. With a known ``loss_floor`` we also accept a run that started
near the floor (nothing left to learn) as healthy. Why: any working setup cuts a random model's loss by far
more than 10 % within a few hundred steps; a flat line means the updates are too small (learning rate
100-1000x too low), the network is dead, or the labels carry no signal (a label bug). A log that starts
late (a resumed run's tail) cannot tell "stuck" from "converged", so it needs a floor.

Died. Statistic (:func:`dead_network`): the run learned (smoothed loss below ``LEARNED`` x the reference),
then came back to at least ``RELAPSE`` x the reference and stayed there to the end, flat (per-record noise
of the log loss below ``FLAT``), while the total gradient norm after the jump has a median below
``DEAD_GRADIENT`` x its median before. Why: a ReLU network knocked off by one huge update outputs the same
logits for every input; its loss is then the entropy of the class prior -- ln K for balanced classes, the
untrained level -- the same on every batch but for the batch's labels, and no gradient reaches the dead
units (what is left is the output bias's, 0.1-0.3 x the live network's norm in the benchmark). A run thrown back by a too-high learning rate has the same loss but *large* gradients
(``divergence``); the gradient norm is what tells them apart, so without ``grad_norm`` this part is silent.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-11-30): loss_plateau
(never learned and dead network) 25/27 top-1; all labels 203/243, 2/90 false alarms (docs/doctor.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import blew_up, first_sustained, noise_scale, reference_level, smooth, tail, window_for

MIN_DROP = 0.1
LEARNED = 0.8
RELAPSE = 0.9
DEAD_GRADIENT = 0.3
FLAT = 0.1  # per-record log-loss noise of a dead network: its batches only differ in their labels
LESSON = "docs/doctor.md#loss_plateau"
FIX = ("raise the learning rate (LR range test), check that labels match inputs and that activations are not "
       "dead; check the data pipeline feeds real labels")


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < 8 or run.nonfinite["train_loss"].any():
        return []
    start = reference_level(run, loss)
    if blew_up(loss, start) is not None:
        return []  # the loss exploded and never recovered: divergence, not a learning rate too small
    died = dead_network(run, loss, start)
    if died is not None:
        step, ratio, evidence = died
        return [Finding("loss_plateau", confidence(0.8, DEAD_GRADIENT / max(ratio, 1e-6)), step, evidence,
                        fix="lower the learning rate or clip gradients so one bad step cannot switch every unit "
                            "off; LeakyReLU/GELU, a fan-in initialisation; restart from a checkpoint before the "
                            "jump", experiment="count active ReLU units on a batch before and after the jump",
                        lesson=LESSON)]
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
                    fix=FIX, experiment="overfit one batch: 100 steps on a single batch must drive its loss near 0",
                    lesson=LESSON)]


def dead_network(run, loss: pd.Series, reference: float):
    """(step, gradient ratio, evidence) when the network learned, died and sits at the reference; else None."""
    norms = run.curve("grad_norm")
    if len(loss) < 12 or len(norms) < 8 or reference <= 0:
        return None
    smoothed = smooth(loss, window_for(len(loss)))
    learned = smoothed[smoothed < LEARNED * reference]
    if learned.empty:
        return None
    after = smoothed.loc[learned.index[0]:]
    step = first_sustained(after >= RELAPSE * reference, max(3, len(loss) // 50))
    if step is None or float(tail(smoothed, 0.2).median()) < RELAPSE * reference:
        return None
    before, later = norms[norms.index < step], norms[norms.index > step]
    if len(before) < 3 or len(later) < 3 or not float(before.median()) > 0:
        return None
    ratio = float(later.median()) / float(before.median())
    if ratio >= DEAD_GRADIENT or noise_scale(np.log(loss.loc[step:])) > FLAT:
        return None
    end = float(tail(smoothed, 0.2).median())
    return (int(step), ratio,
            f"train loss fell to {float(learned.min()):.4g}, then jumped back to {end:.4g} at step {int(step)} "
            f"(an untrained model scores {reference:.4g}) and stayed there, while the gradient norm fell to "
            f"{ratio:.1e} of what it was: the network died (every unit switched off) and cannot recover")
