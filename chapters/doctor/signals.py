"""Small, robust statistics the rules share.

Training curves are noisy, sparse and sometimes a million points long. Every rule therefore reads a
*curve*: the finite values of one key against the step, reduced to at most ``MAX_POINTS`` bins
(:func:`chapters.records.runlog.curve`) (each bin's median) so a huge log costs what a small one
does, then smoothed with a rolling *median* -- a median ignores a single wild batch, a mean would
chase it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chapters.records.runlog import curve  # built by the reader (RunLog.curve); rules import it from here

FLOOR_OVER_UNTRAINED = 1.05  # a declared loss floor this far above ln K: the loss is not per outcome (untrained_loss)


def smooth(values: pd.Series, window: int) -> pd.Series:
    """Centred rolling median; the ends use the points they have."""
    return values.rolling(max(1, window), center=True, min_periods=1).median()


def median_ahead(values, window: int):
    """Rolling median of each record and the ``window - 1`` records after it (NaN where fewer remain): what
    the run did *from* there, beside ``values.rolling(window).median().shift(1)``, what it did up to there.
    (Reversed, rolled, reversed back: pandas rolls over the records before a point, never after.)"""
    return values.iloc[::-1].rolling(window, min_periods=window).median().iloc[::-1]


def window_for(count: int, fraction: float = 0.04, least: int = 3) -> int:
    """An odd window holding about ``fraction`` of the points, at least ``least``."""
    window = max(least, int(count * fraction))
    return window + 1 - window % 2


def head(values: pd.Series, fraction: float = 0.1, least: int = 3) -> pd.Series:
    return values.iloc[: max(least, int(len(values) * fraction))]


def val_losses(run) -> pd.Series:
    """The run's positive validation losses against the step: the ones whose logarithm the rules can take
    (a log may hold a 0 where an evaluation failed to run)."""
    val = curve(run.evals, "val_loss")
    return val[val > 0]


def reference_level(run, loss: pd.Series) -> float:
    """The untrained model's loss, the level every loss rule measures a run against.

    A model that knows nothing predicts the uniform distribution over its K classes (or V tokens), whose
    cross-entropy is exactly ln K -- so when ``run_start`` says how many there are
    (:attr:`RunLog.class_count <chapters.records.runlog.RunLog.class_count>`: ``vocab_size``,
    ``num_classes``, ``num_labels``..., at its top or in the config it carries) that is the reference,
    whatever the first records show (an LR far too high can throw the loss up before the first
    record is written, and a median of the first records would then start *after* the jump) -- unless a
    declared floor says the loss is not per outcome (:func:`untrained_loss`). Otherwise the first record
    alone: it is the nearest thing to the untrained model the log has. Its batch noise is
    covered by the rules asking for the loss to *stay* away from it, in the run's own noise units.
    """
    untrained = untrained_loss(run)
    return untrained if untrained is not None else float(loss.iloc[0])


def untrained_loss(run) -> float | None:
    """ln K (ln V) when ``run_start`` declares the class count, else None -- and None too when the declared
    ``loss_floor`` is above ln K by more than ``FLOOR_OVER_UNTRAINED``.

    Why the floor can veto the count: ln K is the loss of a uniform guess over the K outcomes *per
    outcome predicted*, and no data's entropy per outcome exceeds it -- the best a model can do is never worse
    than knowing nothing. A floor above ln K therefore says the loss is not per outcome: summed over the 30
    bits of a vector, the tokens of a sequence, the pixels of an image (``reduction="sum"``), it starts at
    n ln K. Taken as the reference anyway, every such run starts "thirty times above an untrained model":
    an outside masked autoregressive model of binary vectors declared ``vocab_size`` 2 beside its NLL in
    nats per vector, and 19 of its 22 healthy runs were ``divergence`` until 2026-12-07. Without a floor the
    count is taken at its word."""
    count = run.class_count
    if count is None:
        return None
    floor = run.info("loss_floor")
    if floor is not None and floor > FLOOR_OVER_UNTRAINED * math.log(count):
        return None
    return math.log(count)


def noise_scale(values: pd.Series) -> float:
    """The run's own record-to-record noise: a robust standard deviation of one record.

    1.4826 x the median absolute difference between consecutive records, divided by sqrt(2) (the difference
    of two independent draws has twice the variance of one). Differences remove a slow trend; the median
    ignores a few wild records. Thresholds in the rules are multiples of this scale (``NOISE_UNITS``), so a
    drop, a rise or a gap means the same thing on a smooth run and on a noisy one.
    """
    differences = np.diff(values.to_numpy(dtype=float))
    differences = differences[np.isfinite(differences)]
    if len(differences) == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(differences)) / math.sqrt(2))


def factor(log_units: float) -> float:
    """e ** ``log_units``: a threshold measured in log units as a factor on the loss -- and ``inf`` past the
    largest float, where ``math.exp`` raises. Why it can pass: a loss that jumps between 1e-40 and 1e38
    (float32's extremes) from one record to the next has a noise of about 100 log units, and 6 of those is
    e ** 600; no finite value clears that bar, which is the right answer."""
    return math.exp(log_units) if log_units < math.log(np.finfo(float).max) else math.inf


def jitter_scale(values: pd.Series) -> float:
    """Like :func:`noise_scale`, but around a steady trend: the consecutive differences minus their median.

    A curve that falls by the same 1 % every record has a ``noise_scale`` of about 1 % and no jitter at all;
    use this where "does it jump about?" must not be answered yes by a steady descent."""
    differences = np.diff(values.to_numpy(dtype=float))
    differences = differences[np.isfinite(differences)]
    if len(differences) == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(differences - np.median(differences))) / math.sqrt(2))


TREND_Z = 1.96  # a Mann-Kendall z this far from 0: a trend at the 5 % level
TREND_EVALS = 5  # the fewest points whose Mann-Kendall trend can reach that level (all five in order)


def trend_z(values: pd.Series) -> float:
    """Mann-Kendall trend statistic of ``values``, as a standard normal score (negative: falling).

    Counts, over every pair of points, whether the later one is higher or lower (the sign of the
    difference), and scales the sum by its standard deviation when the order is random, sqrt(n(n-1)(2n+5)/18).
    Why this test: it asks only "does the curve tend to go down?", not how fast or in what shape, and one
    wild record changes only its own n - 1 pairs, however wild it is -- a least-squares slope follows it. |z| below
    1.96 means no trend at the 5 % level. O(n^2) pairs: a curve is binned to at most 2,000 points and the
    callers pass half of one, so at most half a million pairs.
    """
    x = values.to_numpy(dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n < 3:
        return 0.0
    pairs = np.sign(x[None, :] - x[:, None])[np.triu_indices(n, 1)]
    return float(pairs.sum() / math.sqrt(n * (n - 1) * (2 * n + 5) / 18))


def blew_up(loss: pd.Series, reference: float, exact: bool) -> int | None:
    """Step of the first record at ``BLOWUP`` x the untrained reference, when the run never learned after it
    (its smoothed loss never below ``RELAPSE`` x the reference again); else None.

    Ten times what a model that knows nothing scores is no batch noise: the weights were thrown far out
    (confidently wrong on everything). A run that never comes back below the untrained level after that is
    diverged even if it looks flat afterwards -- calling it a plateau would advise a *larger* learning rate.

    ``exact``: the reference is ln K. When it is not -- the first record, one batch -- it is as noisy as any
    record, and the jump must also clear ``NOISE_UNITS`` of the noise of the two records compared: sqrt 2 x
    the per-record scale of the records before the jump, around their trend (:func:`jitter_scale`: a steady
    climb up to the jump is no noise). A regression logged every step at batch 4 swings from 0.24 to 5.9
    between records, and one lucky first batch 10x below the rest is no start to blow up from (a healthy
    run was called diverged so until 2026-12-02). Measured before the jump, because after it a diverged
    run's own swings would raise the bar it has to clear -- unless fewer than three records come before it:
    then the run after the jump is the only measure of its batch noise there is (until 2026-12-03 10x
    stood there, and an MC-dropout regression at batch 4 whose first batch drew 0.03 and third 1.15,
    swinging 0.05-0.8 ever after while its val loss fell steadily, was "diverged"). The issue's 4.6 -> 136
    at the second record, then 25-35, clears that: the run after the jump is calm beside it.
    """
    values = loss.to_numpy()
    hits = np.flatnonzero(values >= BLOWUP * reference)
    if reference <= 0 or len(hits) == 0:
        return None
    if not exact:
        # the noise before the jump; with fewer than three records there, the only measure of the batch
        # noise is the run after it
        calm = jitter_scale(pd.Series(np.log(values[: hits[0]] if hits[0] >= 3 else values[hits[0]:])))
        hits = np.flatnonzero(values >= reference * max(BLOWUP, factor(NOISE_UNITS * math.sqrt(2) * calm)))
        if len(hits) == 0:
            return None
    after = smooth(loss.iloc[hits[0]:], 3)
    return int(loss.index[hits[0]]) if float(after.min()) >= RELAPSE * reference else None


BLOWUP = 10.0
RELAPSE = 0.9
NOISE_UNITS = 6.0  # how many noise scales count as "far": Gaussian noise passes 6 sigma about once in 10^9
MEDIAN_ERROR = 1.2533  # the standard error of a median of n normal draws is sqrt(pi / 2) sigma / sqrt(n)
# Per-record scale of log-loss swings (noise_scale) from which the weights are moving a lot: a model stuck on
# steps too small predicts near-uniformly and scores about the same on every batch (0.1-2 % per record), one
# whose steps overshoot is confident and keeps changing (oscillation.thrashing, plateau.check).
THRASH = 0.1


def tail(values: pd.Series, fraction: float = 0.1, least: int = 3) -> pd.Series:
    return values.iloc[-max(least, int(len(values) * fraction)):]


def quarter_medians(values: pd.Series) -> tuple[float, float]:
    """The medians of the first and of the last quarter of ``values`` (two records each at least): where a
    stretch began and where it ended, each over enough records that one batch does not decide it (a
    plateau's drift, a memory curve's growth)."""
    quarter = max(2, len(values) // 4)
    return float(values.iloc[:quarter].median()), float(values.iloc[-quarter:].median())


def after_start(loss: pd.Series) -> pd.Series:
    """The run after its first 5 % (at least one record): where a swing is measured, the untrained start
    -- the steepest records of any run -- left out (:func:`oscillation.swings`, :func:`plateau.check`)."""
    return loss.iloc[max(1, len(loss) // 20):]


def first_sustained(mask: pd.Series, length: int) -> int | None:
    """Index label where ``mask`` first stays True for ``length`` consecutive points, else None."""
    flags = mask.to_numpy(dtype=bool)
    if length <= 1:
        hits = np.flatnonzero(flags)
        return mask.index[hits[0]] if len(hits) else None
    runs = np.convolve(flags.astype(int), np.ones(length, int), mode="valid")
    hits = np.flatnonzero(runs == length)
    return mask.index[hits[0]] if len(hits) else None


def zeros_to_the_end(zero: np.ndarray) -> int | None:
    """Position of the first of the True values that run to the end of ``zero`` (a flag per record: "this
    record is 0"); None when the last record is not one of them, or every record is. A group that stood
    still from mid-run (:func:`frozen._zero_since`) or went silent (:func:`gradients._went_silent`) shows
    such a run of zeros, each rule with its own bar on how long it must be."""
    if len(zero) == 0 or not zero[-1] or zero.all():
        return None
    return len(zero) - int(np.argmin(zero[::-1]))


def group_keys(frame: pd.DataFrame, prefix: str) -> list[str]:
    """Per-group columns such as ``grad_norm/embedding`` (names after the slash are free-form)."""
    return [c for c in frame.columns if isinstance(c, str) and c.startswith(prefix + "/")]

