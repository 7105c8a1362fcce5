"""``no_shuffle``: the loss curve repeats the same shape every epoch.

Without shuffling, every epoch serves the same batches in the same order; when the data is grouped (by
domain, source, class) the model drifts towards each group in turn, and the loss draws the same saw-tooth
every epoch. Statistic: the train loss minus a rolling mean one epoch wide (which removes the trend and keeps
the within-epoch shape), binned by position within the epoch; each epoch's bin profile is scaled to unit
spread, and the mean profiles of even and of odd epochs are compared by Pearson correlation. Threshold:
correlation above ``MIN_CORRELATION`` and a profile that explains at least ``MIN_SHARE`` of the residual
variance, over at least four whole epochs. Why split halves: a random shape can look periodic once; the
same shape in two independent sets of epochs is not noise. Why scale each epoch: the *shape* repeats, its
*size* does not -- it shrinks as the learning rate decays, and with a high learning rate a few epochs of
violent forgetting would otherwise decide the shape alone; scaled, every epoch votes equally. The epoch
length comes from ``run_start.steps_per_epoch``, fractional ``epoch`` values, or epoch changes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chapters.doctor.findings import Finding, confidence

MIN_CORRELATION = 0.65  # two independent 8-point profiles correlate this well by chance ~4 % of the time
MIN_SHARE = 0.1
BINS = 8
MIN_EPOCHS = 4  # whole epochs: two even and two odd, so neither half rests on one epoch
LESSON = "docs/doctor.md#no_shuffle"


def check(run) -> list[Finding]:
    train = run.train
    if "train_loss" not in train:
        return []
    frame = train[["step", "train_loss"] + (["epoch"] if "epoch" in train else [])].copy()
    frame = frame[np.isfinite(frame["train_loss"])]
    phase, epoch = _phase(frame, run.info("steps_per_epoch"))
    if phase is None:
        return []
    count = int(np.count_nonzero(np.diff(epoch.to_numpy()))) + 1
    per_epoch = len(frame) / count
    if count < MIN_EPOCHS or per_epoch < BINS:
        return []
    loss = np.log(frame["train_loss"].clip(lower=1e-3))  # a log scale, so a shape is a shape at any level
    residual = (loss - loss.rolling(int(round(per_epoch)), center=True, min_periods=1).mean()).to_numpy()
    bins = np.minimum((phase.to_numpy() * BINS).astype(int), BINS - 1)
    epoch = epoch.to_numpy()
    epochs = np.concatenate([[0], np.cumsum(epoch[1:] != epoch[:-1])])  # 0, 1, 2... in step order
    # Mean residual per (epoch, bin) cell, with bincount: one pass over the records, fast on huge logs.
    cell = epochs * BINS + bins
    counts = np.bincount(cell, minlength=(epochs.max() + 1) * BINS).reshape(-1, BINS)
    sums = np.bincount(cell, residual, minlength=(epochs.max() + 1) * BINS).reshape(-1, BINS)
    whole = (counts > 0).all(axis=1)  # whole epochs only
    profile = sums[whole] / counts[whole]
    if len(profile) < MIN_EPOCHS:
        return []
    centred = profile - profile.mean(axis=1, keepdims=True)
    spread = centred.std(axis=1, keepdims=True)
    scaled = centred[spread[:, 0] > 0] / spread[spread[:, 0] > 0]  # each epoch's shape at unit size
    even, odd = scaled[::2].mean(axis=0), scaled[1::2].mean(axis=0)
    if len(scaled) < MIN_EPOCHS or even.std() == 0 or odd.std() == 0:
        return []
    correlation = float(np.corrcoef(even, odd)[0, 1])
    shape = profile.mean(axis=0)
    share = 1 - float(((residual - shape[bins]) ** 2).mean() / max((residual ** 2).mean(), 1e-30))
    if correlation < MIN_CORRELATION or share < MIN_SHARE:
        return []
    swing = float(np.exp(shape.max() - shape.min()) - 1)
    return [Finding("no_shuffle", confidence(0.8, correlation / MIN_CORRELATION * share / MIN_SHARE),
                    int(frame["step"].iloc[0]),
                    f"the loss repeats one within-epoch shape over {len(profile)} epochs (swing {swing:.0%}, "
                    f"correlation {correlation:.2f} between even and odd epochs, {share:.0%} of the "
                    "residual variance)",
                    fix="shuffle the training data every epoch with a seeded generator "
                        "(DataLoader(shuffle=True, generator=...))",
                    experiment="re-run with shuffle=True: the saw-tooth disappears and val loss is lower",
                    lesson=LESSON)]


def _phase(frame: pd.DataFrame, steps_per_epoch):
    """(position within the epoch in [0, 1), epoch index) per record, or (None, None)."""
    step = frame["step"]
    if "epoch" in frame and frame["epoch"].notna().all():
        epoch = frame["epoch"].astype(float)
        fractional = (epoch % 1 != 0).mean() > 0.5
        if fractional:
            return epoch % 1, np.floor(epoch).astype(int)
    if steps_per_epoch and steps_per_epoch >= 1:
        # step counts completed optimizer steps: steps 1..spe belong to epoch 0.
        position = (step - 1) % steps_per_epoch
        return position / steps_per_epoch, ((step - 1) // steps_per_epoch).astype(int)
    if "epoch" in frame and frame["epoch"].notna().all():
        epoch = frame["epoch"].to_numpy().astype(int)
        labels, first_index = np.unique(epoch, return_index=True)  # rows are in step order
        if len(labels) < 3:
            return None, None
        first_step = step.to_numpy()[first_index]
        length = float(np.median(np.diff(first_step)))
        if not length > 0:
            return None, None
        start = first_step[np.searchsorted(labels, epoch)]
        return pd.Series(np.clip((step.to_numpy() - start) / length, 0, 0.999)), pd.Series(epoch)
    return None, None
