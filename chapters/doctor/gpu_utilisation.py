"""``gpu_underutilised``: the GPU spent much of the run waiting -- usually for the input pipeline.

Statistic: ``gpu_util`` (percent, NVML's "a kernel was running" share of the last sample period; see
``chapters/metrics/gpu_util.py``) after the first ``WARMUP`` of the records (compilation, cudnn autotuning and
the first batches are slow for reasons that go away), smoothed with a rolling median of 3 so one sample
taken during an evaluation or a checkpoint save does not count. Threshold: the smoothed value is below
``BUSY`` (80 %) on at least ``SHARE`` (half) of the records, including a stretch of ``max(3, 10 %)`` records in a
row (where the finding starts). Why 80 %: a training step that keeps the GPU fed
queues its next kernels while the current ones run, so NVML reads 90-100 %; a steady figure below 80 % means
the GPU finished its work and sat idle waiting for the host -- a data loader that cannot keep up (too few
``num_workers``, no ``pin_memory``, slow decoding or tokenisation), Python overhead between kernels, or a
``.item()`` / ``print(loss)`` on every step that makes the CPU wait for the GPU before it can queue more.
"Half of the records" and not "the median": a run whose loader starts to stall half-way is starved from then
on, and the step where it starts is the evidence.

What it is not: proof that the *model* is too small for the GPU. A tiny model on a big card launches kernels
too short to fill it and reads low for that reason alone; the confirming experiment separates the two.

Input checks: values outside 0-100 are not percentages and are ignored. A log whose every value lies in
[0, 1] may be written as fractions (0.95 = 95 %) or be a GPU that is really idle (0.95 %); the rule cannot tell,
and says nothing rather than guess.

Like ``throughput_drop`` it is about the machine, not the training, so the ranking (``rules.MACHINE``) never
lists it above a finding about the loss or the gradients. Evaluated on constructed logs only
(``tests/test_doctor_gpu_util.py``); no GPU run has been benchmarked yet.
"""

from __future__ import annotations

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import first_sustained, smooth

BUSY = 80.0
SHARE = 0.5
WARMUP = 0.05
LESSON = "docs/doctor.md#gpu_underutilised"


def check(run) -> list[Finding]:
    util = run.curve("gpu_util")
    util = util[(util >= 0) & (util <= 100)]
    util = util.iloc[max(1, int(len(util) * WARMUP)):]
    if len(util) < 8 or util.max() <= 1.0:
        return []
    smoothed = smooth(util, 3)
    low = smoothed < BUSY
    share = float(low.mean())
    if share < SHARE:
        return []
    step = first_sustained(low, max(3, len(util) // 10))
    if step is None:
        return []  # low and busy records alternating: no stretch of starvation to point at
    start = int(step)
    level = float(util.loc[start:].median())
    return [Finding("gpu_underutilised", confidence(0.5, BUSY / max(level, 1.0)), start,
                    f"gpu_util is below {BUSY:.0f} % on {share:.0%} of the records (median {level:.0f} % from step "
                    f"{start}): the GPU is waiting between steps",
                    fix="feed the GPU: more DataLoader num_workers, pin_memory=True, prefetching, pre-tokenised "
                        "data; read the loss (.item()) only on logging steps; a bigger batch if memory allows",
                    experiment="time the data loader alone for the same number of batches, and the model step "
                               "alone on one cached batch on the GPU: if the loader is slower, it is the bottleneck",
                    lesson=LESSON)]
