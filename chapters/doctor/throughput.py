"""``throughput_drop``: training became much slower in the middle of the run, and stayed slow.

Statistic: log ``tokens_per_sec`` (the very first record is skipped: it pays for warm-up and compilation)
against its baseline, the median of the first quarter; the run's own timing noise is the robust scale of
record-to-record differences (:func:`signals.noise_scale`). Threshold: a rolling median (3) below ``DROP``
(half) of the baseline for a long stretch -- ``max(3, 10 %)`` of the records in a row, and again at the
end of the run -- *and* the median after the drop below the baseline by at least ``NOISE_UNITS`` noise
scales (on a log scale). Why both:
an evaluation or a checkpoint save makes one slow window; a neighbour on a shared machine makes the
speed *jitter* -- slower on average, but by an amount of the order of its own noise; a data loader that
starts to stall, thermal throttling or a straggler rank makes a clean step down that stays.

Speed measures the machine as much as the training, so the finding is a low-priority one: the ranking
(``rules.MACHINE``) never lists it above a finding about the loss or the gradients, which explains the run
better than the clock does.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01):
throughput_drop 18/18 top-1, no throughput_drop on any of the 18 busy-neighbour runs; all labels 218/243,
1/90 false alarms (docs/doctor.md).
"""

from __future__ import annotations

import numpy as np

from chapters.doctor import signals
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import first_sustained, noise_scale, smooth

DROP = 0.5
LESSON = "docs/doctor.md#throughput_drop"


def check(run) -> list[Finding]:
    speed = run.curve("tokens_per_sec").iloc[1:]
    speed = speed[speed > 0]
    if len(speed) < 8:
        return []
    log_speed = np.log(speed)
    base = float(log_speed.iloc[: max(3, len(speed) // 4)].median())
    rolled = smooth(log_speed, 3)
    length = max(3, len(speed) // 10)
    slow = rolled < base + np.log(DROP)
    step = first_sustained(slow, length)
    if step is None or not slow.iloc[-length:].all():
        return []  # a slow stretch that ended: a neighbour's job, an evaluation, not a stalled pipeline
    low = float(log_speed.loc[step:].iloc[:max(length, len(log_speed.loc[step:]) // 2)].median())
    noise = noise_scale(log_speed)
    units = (base - low) / max(noise, 1e-12)
    if units < signals.NOISE_UNITS:
        return []
    ratio = float(np.exp(low - base))
    return [Finding("throughput_drop", confidence(0.6, units / signals.NOISE_UNITS), int(step),
                    f"tokens/sec fell from {np.exp(base):,.0f} to {np.exp(low):,.0f} ({ratio:.0%}) from step "
                    f"{int(step)} and stayed down; the drop is {units:.0f}x the run's own timing noise",
                    fix="profile the input pipeline (num_workers, pin_memory, slow transforms), look for "
                        "growing memory or syncs inside the loop, check the device clock and neighbours",
                    experiment="time the data loader alone for the same number of batches, then the model "
                               "step alone on one cached batch",
                    lesson=LESSON)]
