"""``throughput_drop``: training became much slower in the middle of the run.

Statistic: ``tokens_per_sec`` against its baseline, the median of the first quarter of the run (the very
first record is skipped: it pays for warm-up and compilation). Threshold: a rolling median below ``DROP``
(half) of the baseline for a sustained stretch (``max(3, 5 %)`` of the records). Why sustained: an
evaluation or a checkpoint save inside a logging window makes one slow record; a data loader that starts
to stall, thermal throttling or a leak that makes the allocator work harder stays slow.
"""

from __future__ import annotations

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import first_sustained, smooth

DROP = 0.5
LESSON = "docs/doctor.md#throughput_drop"


def check(run) -> list[Finding]:
    speed = run.curve("tokens_per_sec").iloc[1:]
    speed = speed[speed > 0]
    if len(speed) < 8:
        return []
    base = float(speed.iloc[: max(3, len(speed) // 4)].median())
    rolled = smooth(speed, 3)
    step = first_sustained(rolled < DROP * base, max(3, len(speed) // 20))
    if step is None:
        return []
    low = float(rolled.loc[step:].median())
    return [Finding("throughput_drop", confidence(0.75, DROP * base / max(low, 1e-9)), int(step),
                    f"tokens/sec fell from {base:,.0f} to {low:,.0f} ({low / base:.0%}) from step {int(step)}",
                    fix="profile the input pipeline (num_workers, pin_memory, slow transforms), look for "
                        "growing memory or syncs inside the loop, check the device clock and neighbours",
                    experiment="time the data loader alone for the same number of batches, then the model "
                               "step alone on one cached batch",
                    lesson=LESSON)]
