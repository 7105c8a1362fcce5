"""``throughput_drop``: training became much slower in the middle of the run, and stayed slow.

Statistic: log ``tokens_per_sec``, or steps per second from ``step_time_ms`` when a log times its steps
instead (:func:`speed_curve`; the very first record is skipped: it pays for warm-up and compilation), split
where it steps down (:func:`step_down`: the single change point that best separates a faster stretch from a
slower one, the standard CUSUM statistic for one shift in the mean); the drop is the ratio of the medians
after and before the split, and the run's own timing noise is the robust scale of record-to-record differences
(:func:`signals.noise_scale`). Threshold: the speed after the split below ``DROP`` (half) of the speed before
it and at least ``NOISE_UNITS`` noise scales down (on a log scale) -- or below ``MILD_DROP`` and
``CLEAR_UNITS`` noise scales down -- for at least ``max(3, 10 %)`` of the records, and still there at the end
of the run (a rolling median of 3 under the bar over the last of them, and nearer the slow level than the fast
one: a neighbour that gives most of the cores back before the end leaves a run at 0.68x after 0.46x -- a
busy-machine run of the benchmark families, named when the shallower bar came to 0.7x on 2026-12-07). Why
both: an evaluation or a checkpoint save makes one slow window; a neighbour on a shared machine makes the
speed *jitter* -- slower on average, but by an amount of the order of its own noise; a data loader that starts
to stall, thermal throttling or a straggler rank makes a clean step down that stays. Why the second bar: a
step to 0.51-0.54x that stands 13-46 noise scales clear is as plain as one to 0.3x (8 outside runs were called
healthy beside a fixed 0.5 until 2026-12-03), while a shared machine's jitter stays within 2-7 scales. Until
2026-12-07 that bar was 0.6x at 12 scales: a loader that starts sleeping 20 ms a batch slows a 40 ms step to
0.6-0.7x, 8-15 scales clear, and sixteen such outside runs were healthy; of 1,316 healthy outside runs, on
machines shared with three other trainers, one stepped down as far and as cleanly (0.64x, 12 scales, from its
third record). A shallow step needs ``MILD_BASE`` (5) fast records before it: three or four are the start of a
run -- caches warming, a neighbour not yet started -- and two healthy runs stepped to 0.64-0.65x after them
(one of them in a set held out on the day of the change); the slowest-starting loader fault of the sixteen
stepped down after five. And the other way round: a step to under ``DEEP_DROP`` (a third) counts at half
``NOISE_UNITS`` -- a neighbour slows a run by the share of the cores it takes (1.2-1.8x on the benchmark's
busy machines), and a clock jittering +-40 % per record (an outside flow on a simulated busy clock, 53,000 ->
12,000 tokens/sec from step 510 to the end: 4.2 noise scales) hides no fourfold slowdown; healthy until
2026-12-05. Why a change point and not the first quarter as the baseline: a loader that stalls early (step 3
of 34) leaves a first quarter that is mostly slow already.

Speed measures the machine as much as the training, so the finding is a low-priority one: the ranking
(``rules.MACHINE``) never lists it above a finding about the loss or the gradients, which explains the run
better than the clock does.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01):
throughput_drop 18/18 top-1, no throughput_drop on any of the 18 busy-neighbour runs; all labels 218/243, 1/90
false alarms (docs/doctor.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chapters.doctor import signals
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import noise_scale, smooth

DROP = 0.5
MILD_DROP = 0.7  # a shallower step counts when it stands CLEAR_UNITS clear of the timing noise
CLEAR_UNITS = 8.0  # noise scales: healthy outside runs' steps to 0.6-0.7x stayed under 8 (one in 1,316 passed)
MILD_BASE = 5  # records before the split, for the shallower bar
DEEP_DROP = 1 / 3  # ... and a step to under a third counts at half NOISE_UNITS
LESSON = "docs/doctor.md#throughput_drop"


def check(run) -> list[Finding]:
    speed, unit = speed_curve(run)
    speed = speed.iloc[1:]
    speed = speed[speed > 0]
    if len(speed) < 8:
        return []
    log_speed = np.log(speed)
    length = max(3, len(speed) // 10)
    rolled = smooth(log_speed, 3)
    split = step_down(rolled, length)
    base = float(log_speed.iloc[:split].median())
    low = float(log_speed.iloc[split:].median())
    units = (base - low) / max(noise_scale(log_speed), 1e-12)
    bar = MILD_DROP if units >= CLEAR_UNITS and split >= MILD_BASE else DROP
    needed = signals.NOISE_UNITS / 2 if low - base < np.log(DEEP_DROP) else signals.NOISE_UNITS
    still_slow = rolled.iloc[-length:] < min(base + np.log(bar), (base + low) / 2)
    if low >= base + np.log(bar) or units < needed or not still_slow.all():
        return []  # a shallow dip, timing jitter, or a slow stretch that ended (a neighbour, an evaluation)
    step = log_speed.index[split]
    ratio = float(np.exp(low - base))
    return [Finding("throughput_drop", confidence(0.6, units / signals.NOISE_UNITS), int(step),
                    f"{unit} fell from {_rate(np.exp(base))} to {_rate(np.exp(low))} ({ratio:.0%}) from step "
                    f"{int(step)} and stayed down; the drop is {units:.0f}x the run's own timing noise",
                    fix="profile the input pipeline (num_workers, pin_memory, slow transforms), look for "
                        "growing memory or syncs inside the loop, check the device clock and neighbours",
                    experiment="time the data loader alone for the same number of batches, then the model "
                               "step alone on one cached batch",
                    lesson=LESSON)]


def speed_curve(run) -> tuple[pd.Series, str]:
    """``tokens_per_sec`` -- or, in a log that times its steps instead (``step_time_ms`` alone), steps per
    second, ``1000 / step_time_ms``. Why either will do: at a fixed batch the two are proportional, and the
    drop is a ratio of speeds, the same in any unit."""
    tokens = run.curve("tokens_per_sec")
    step_time = run.curve("step_time_ms")
    if len(tokens) or not len(step_time):
        return tokens, "tokens/sec"
    return 1000.0 / step_time[step_time > 0], "steps/sec"


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"  # 12,345 tokens/sec; 4.2 steps/sec


def step_down(values: pd.Series, length: int) -> int:
    """Position of the one change point that best splits ``values`` into a higher stretch and a lower one
    after it: the CUSUM statistic ``(mean before - mean after) x sqrt(k (n - k) / n)``, largest over every
    split leaving at least 2 records before and ``length`` after. Why sqrt(k (n - k) / n): a difference of
    two means is noisier the shorter either stretch is; scaled so, every split is compared at the same
    noise, and the one that explains the most is a real step rather than a short slow window at an end.
    Running sums make it one pass over the run (a million records in milliseconds)."""
    x = values.to_numpy(dtype=float)
    n = len(x)
    k = np.arange(2, n - length + 1)
    if len(k) == 0:
        return max(1, n - length)
    total = np.cumsum(x)
    before = total[k - 1] / k
    after = (total[-1] - total[k - 1]) / (n - k)
    return int(k[np.argmax((before - after) * np.sqrt(k * (n - k) / n))])
