"""Learning-rate range test: measure where training becomes unstable before choosing a learning rate.

Guessing an LR and waiting hours to see it diverge is the slow way. The fast way (L. Smith, "Cyclical Learning
Rates for Training Neural Networks", 2017, and every tuning guide since) is a short sweep: the same model, data
and seed, a few dozen steps at each of a geometric series of LRs, and the loss each run ends at. The curve has
three regions:

* too small: the loss barely moves from the untrained model's ln V;
* useful: the loss falls further as the LR grows;
* unstable: past some LR the steps are too large for the curvature -- the loss stalls high, swings, or blows up
  to NaN -- and the run ends *worse* the larger the LR.

The **instability threshold** is the smallest swept LR above the best one whose run ends more than ``WORSE``
(25 %) above the best run's loss, above the untrained loss ln V, or non-finite. Choose at or below the best
point and a few times below the threshold, never at the edge: a short run does not yet see the sharper regions
of the loss a long run reaches, and the riskiest moment of the real schedule -- the first steps at the peak LR
right after warmup -- comes later than these runs last. Every run here is seeded, so the sweep is reproducible
and can be compared across code changes.

On the course's tiny preset (60 steps, batch 16, seed 0) the seven-point sweep from 1e-3 to 1 ends lowest at
1e-2 -- the preset's own LR -- and the threshold is the next point, 3.2e-2, where the loss stalls almost 60 %
higher; at 1 the run ends above ln V.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from chapters.core.callbacks import History
from chapters.core.run import build_trainer, preset_config

WORSE = 1.25


@dataclass
class SweepPoint:
    lr: float
    final_loss: float  # median train loss of the last records; inf when the run went non-finite
    untrained_loss: float  # ln V: what a model that knows nothing scores

    @property
    def diverged(self) -> bool:
        return not math.isfinite(self.final_loss) or self.final_loss > self.untrained_loss


def lr_sweep(lrs, preset: str = "tiny", steps: int = 60, warmup_steps: int = 10, batch_size: int = 16,
             seed: int = 0, device: str = "cpu") -> list[SweepPoint]:
    """One short seeded run per LR (in increasing order), each ending at the median of its last 5 records."""
    points = []
    for lr in sorted(lrs):
        history = History()
        config = preset_config(preset, steps=steps, lr=lr, warmup_steps=warmup_steps, batch_size=batch_size,
                               seed=seed, log_every=1, eval_every=steps + 1, device=device)
        trainer = build_trainer(preset, config, [history])
        trainer.fit()
        losses = history.series("train_loss")
        tail = losses[-5:]
        final = statistics.median(tail) if tail and all(math.isfinite(x) for x in tail) else math.inf
        points.append(SweepPoint(lr, final, math.log(trainer.model.config.vocab_size)))
    return points


def instability_threshold(points: list[SweepPoint]) -> float | None:
    """The smallest LR above the best one whose run diverged or ended ``WORSE`` x above the best; None if none."""
    finite = [p for p in points if not p.diverged]
    if not finite:
        return None
    best = min(finite, key=lambda p: p.final_loss)
    for point in sorted(points, key=lambda p: p.lr):
        if point.lr > best.lr and (point.diverged or point.final_loss > WORSE * best.final_loss):
            return point.lr
    return None


def geometric(low: float, high: float, count: int) -> list[float]:
    """``count`` LRs from ``low`` to ``high``, equally spaced on a log scale."""
    return [low * (high / low) ** (i / (count - 1)) for i in range(count)]
