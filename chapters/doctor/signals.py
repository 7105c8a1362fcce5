"""Small, robust statistics the rules share.

Training curves are noisy, sparse and sometimes a million points long. Every rule therefore reads a
*curve*: the finite values of one key against the step, reduced to at most ``MAX_POINTS`` bins (each bin's
median) so a huge log costs what a small one does, then smoothed with a rolling *median* -- a median
ignores a single wild batch, a mean would chase it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MAX_POINTS = 2000


def curve(frame: pd.DataFrame, key: str, bins: bool = True) -> pd.Series:
    """Finite values of ``key`` indexed by step (binned to ``MAX_POINTS`` medians when longer)."""
    if key not in frame:
        return pd.Series(dtype=float)
    values = pd.Series(frame[key].to_numpy(dtype=float), index=frame["step"].to_numpy())
    values = values[np.isfinite(values.to_numpy())]
    if bins and len(values) > MAX_POINTS:
        width = -(-len(values) // MAX_POINTS)
        position = np.arange(len(values)) // width
        grouped = values.groupby(position)
        values = pd.Series(grouped.median().to_numpy(), index=values.index.to_numpy()[::width][: grouped.ngroups])
    return values


def smooth(values: pd.Series, window: int) -> pd.Series:
    """Centred rolling median; the ends use the points they have."""
    return values.rolling(max(1, window), center=True, min_periods=1).median()


def window_for(count: int, fraction: float = 0.04, least: int = 3) -> int:
    """An odd window holding about ``fraction`` of the points, at least ``least``."""
    window = max(least, int(count * fraction))
    return window + 1 - window % 2


def head(values: pd.Series, fraction: float = 0.1, least: int = 3) -> pd.Series:
    return values.iloc[: max(least, int(len(values) * fraction))]


def start_level(loss: pd.Series) -> float:
    """The loss of the untrained model: the median of the first ~2 % of points (at least 3).

    A median of a few points, not the first point alone: one record of a small-batch run can be 50 % off.
    Divergence, oscillation and plateau all measure the run against this level.
    """
    return float(head(loss, 0.02).median())


def tail(values: pd.Series, fraction: float = 0.1, least: int = 3) -> pd.Series:
    return values.iloc[-max(least, int(len(values) * fraction)):]


def first_sustained(mask: pd.Series, length: int) -> int | None:
    """Index label where ``mask`` first stays True for ``length`` consecutive points, else None."""
    flags = mask.to_numpy(dtype=bool)
    if length <= 1:
        hits = np.flatnonzero(flags)
        return mask.index[hits[0]] if len(hits) else None
    runs = np.convolve(flags.astype(int), np.ones(length, int), mode="valid")
    hits = np.flatnonzero(runs == length)
    return mask.index[hits[0]] if len(hits) else None


def group_keys(frame: pd.DataFrame, prefix: str) -> list[str]:
    """Per-group columns such as ``grad_norm/embedding`` (names after the slash are free-form)."""
    return [c for c in frame.columns if isinstance(c, str) and c.startswith(prefix + "/")]


def percent(ratio: float) -> str:
    return f"{ratio * 100:.0f} %"
