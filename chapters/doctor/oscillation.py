"""``oscillation``: the loss swings widely instead of falling smoothly.

Statistic: in the second half of the run, the residual of log(train loss) around its rolling median
(``r``), summarised by its typical size (median ``|r|``, the *swing*) and by how regular it is (the lag-1
autocorrelation of ``r``). Threshold: swing above ``SWING`` and ``|autocorrelation|`` above ``MIN_ACF``.
Why both: small batches make every record noisy, but that noise is independent from one record to the
next (autocorrelation near 0). A learning rate too high for the curvature makes the loss bounce between
the walls of a valley -- up, down, up (strongly negative autocorrelation) -- or surge and recover over a
few records (positive).
"""

from __future__ import annotations

import numpy as np

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import smooth, window_for

SWING = 0.1
MIN_ACF = 0.3
LESSON = "docs/doctor.md#oscillation"


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < 16:
        return []
    log_loss = np.log(loss)
    residual = (log_loss - smooth(log_loss, window_for(len(loss), 0.05, 5))).iloc[len(loss) // 2:]
    swing = float(residual.abs().median())
    acf = float(residual.autocorr(1)) if residual.std() > 0 else 0.0
    if swing < SWING or not abs(acf) >= MIN_ACF:
        return []
    return [Finding("oscillation", confidence(0.6, swing / SWING), int(residual.index[0]),
                    f"in the second half the loss swings by {np.expm1(swing):.0%} around its trend, and the "
                    f"swings are regular (lag-1 autocorrelation {acf:+.2f}), not independent batch noise",
                    fix="lower the learning rate, use a larger effective batch (gradient accumulation), "
                        "longer warmup",
                    experiment="re-run with half the learning rate: the swings should shrink and the loss "
                               "end lower",
                    lesson=LESSON)]
