"""Is the learning rate doing what the schedule says? Read it back from the log, do not assume it.

The usual schedule has two shapes, and each has a property a log can check without knowing the config:

* **warmup is linear**: the LR rises by the same amount every step, so its slope (change per step, measured
  between two records) is constant; a curve that bends means another warmup than intended (exponential,
  or a scheduler stepped twice per step);
* **the cosine is smooth**: after the peak the LR only falls, and the slope changes gradually from one record
  to the next. A sudden step down, or any rise, is not the cosine: someone (a callback, a second scheduler,
  code that sets ``param_group["lr"]`` on a plateau, a resumed run that restored the wrong scheduler state)
  changed the LR from outside. With torch's ``CosineAnnealingLR`` such a change is not undone: its update is
  recursive (each LR computed from the previous one), so the whole rest of the run follows the new level.

An SGDR schedule (warm restarts) rises on purpose; this check reports each restart too, which is what you
want to see once to confirm the restarts are where you set them.

It needs records to compare: on the course's schedule (``tests/test_lr_schedule.py`` builds it) a cut to
0.3-0.7x at 60 % of the run is found with a record every 1-10 steps of a 600-step run, a cut to 0.9x only
when the records are denser than the cosine bends (every 1-3 steps there); with two or three records after the
peak nothing can be told from a curve. No false report on the course's schedule at any of those intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LINEAR_TOLERANCE = 0.05  # warmup slopes within 5 % of their median
JUMP_RATIO = 3.0  # a slope 3x both its neighbours' is a step, not a curve...
JUMP_SIZE = 0.01  # ...if the LR moved by at least 1 % of the peak in that interval (float noise is smaller)


@dataclass
class LrIssue:
    step: int  # the first step of the interval where it shows
    kind: str  # "warmup_not_linear", "lr_rose" or "lr_jump"
    detail: str


def check_lr_schedule(steps, lrs) -> list[LrIssue]:
    """Every place where a logged LR curve is not a linear warmup followed by a smooth decay."""
    steps, lrs = np.asarray(steps, dtype=float), np.asarray(lrs, dtype=float)
    keep = np.isfinite(steps) & np.isfinite(lrs)
    steps, lrs = steps[keep], lrs[keep]
    if len(lrs) < 3 or lrs.max() <= 0:
        return []
    peak_lr, peak = float(lrs.max()), int(np.argmax(lrs))
    slopes = np.diff(lrs) / np.diff(steps)  # change per step, between consecutive records
    issues = []
    rising = slopes[:peak - 1]  # the interval into the peak record may straddle the end of warmup: left out
    if len(rising) >= 2:
        typical = float(np.median(rising))
        off = np.flatnonzero(np.abs(rising - typical) > LINEAR_TOLERANCE * abs(typical))
        if len(off):
            i = int(off[0])
            issues.append(LrIssue(int(steps[i]), "warmup_not_linear",
                                  f"warmup slope {rising[i]:.3g}/step at step {int(steps[i])}, the median is "
                                  f"{typical:.3g}/step: the warmup is not linear"))
    falling = slopes[peak:]
    for j, slope in enumerate(falling):
        i = peak + j
        moved = abs(lrs[i + 1] - lrs[i])
        if slope > 0 and moved > 1e-6 * peak_lr:
            issues.append(LrIssue(int(steps[i]), "lr_rose", f"the LR rose from {lrs[i]:.3g} to {lrs[i + 1]:.3g} "
                                  f"between steps {int(steps[i])} and {int(steps[i + 1])}, after the peak"))
            continue
        neighbours = [abs(falling[k]) for k in (j - 1, j + 1) if 0 <= k < len(falling)]
        if (moved >= JUMP_SIZE * peak_lr and neighbours
                and abs(slope) > JUMP_RATIO * max(neighbours)):
            issues.append(LrIssue(int(steps[i]), "lr_jump", f"the LR fell from {lrs[i]:.3g} to {lrs[i + 1]:.3g} "
                                  f"between steps {int(steps[i])} and {int(steps[i + 1])}, {abs(slope) / max(max(neighbours), 1e-30):.0f}x "
                                  f"faster than around it: a step, not the cosine"))
    return issues
