"""``no_shuffle``: the loss curve repeats the same shape every epoch.

Without shuffling, every epoch serves the same batches in the same order; when the data is grouped (by
domain, source, class) the model drifts towards each group in turn, and the loss draws the same saw-tooth
every epoch. Statistic: the train loss minus a rolling mean one epoch wide (which removes the trend and keeps
the within-epoch shape), binned by position within the epoch; the bin profiles of even and of odd epochs are
compared by Pearson correlation. Threshold: correlation above ``MIN_CORRELATION`` and a profile that explains
at least ``MIN_SHARE`` of the residual variance, over at least three whole epochs. Why split halves: a
random shape can look periodic once; the same shape in two independent sets of epochs is not noise. The
epoch length comes from ``run_start.steps_per_epoch``, fractional ``epoch`` values, or epoch changes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chapters.doctor.findings import Finding, confidence

MIN_CORRELATION = 0.75
MIN_SHARE = 0.1
BINS = 8
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
    per_epoch = len(frame) / max(1, epoch.nunique())
    if epoch.nunique() < 3 or per_epoch < BINS:
        return []
    loss = np.log(frame["train_loss"].clip(lower=1e-3))  # a log scale, so a shape is a shape at any level
    trend = loss.rolling(int(round(per_epoch)), center=True, min_periods=1).mean()
    residual = loss - trend
    bins = np.minimum((phase * BINS).astype(int), BINS - 1)
    table = pd.DataFrame({"epoch": epoch.to_numpy(), "bin": bins.to_numpy(), "r": residual.to_numpy()})
    profile = table.groupby(["epoch", "bin"])["r"].mean().unstack()
    profile = profile[profile.notna().sum(axis=1) == BINS]  # whole epochs only
    if len(profile) < 3:
        return []
    even, odd = profile.iloc[::2].mean(), profile.iloc[1::2].mean()
    if even.std() == 0 or odd.std() == 0:
        return []
    correlation = float(np.corrcoef(even, odd)[0, 1])
    shape = profile.mean()
    fitted = table["bin"].map(shape)
    share = 1 - float(((table["r"] - fitted) ** 2).mean() / max((table["r"] ** 2).mean(), 1e-30))
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
    if "epoch" in frame and frame["epoch"].notna().all() and frame["epoch"].nunique() >= 3:
        epoch = frame["epoch"].astype(int)
        first = step.groupby(epoch).transform("min")
        length = float(step.groupby(epoch).min().diff().median())
        if not length or not np.isfinite(length):
            return None, None
        return ((step - first) / length).clip(0, 0.999), epoch
    return None, None
