"""``memory_growth``: memory keeps growing as training goes on (a leak).

Statistic: ``gpu_memory_gb`` (or ``cpu_memory_gb``) after the first 10 % of the run (allocations of the
first steps -- optimizer state, caches -- are normal). Threshold: the median of the last quarter is at least
``GROWTH`` (4 %) and ``MIN_GB`` above the median of the first quarter, memory still rises in the second half
(Spearman rank correlation with the step of at least ``MIN_TREND``), and it rises *steadily* there: split
into ``BLOCKS`` consecutive blocks, the block medians go up from one block to the next at least half the
time and down at most once (:func:`rises_steadily`) -- or, by many steps (:func:`rises_by_many_steps`), no
single record-to-record rise makes half of the second half's rises added up -- and the second half itself
rises by at least ``SECOND_HALF_SHARE`` of the growth (:func:`still_adding`). Why the trend and the
blocks: a peak-memory counter (``torch.cuda.max_memory_allocated``, the caching allocator's reserve)
steps up when a batch longer than any before arrives -- rarely, and more rarely as the run goes on
(about ln n new maxima in n random lengths) -- while a leak (loss tensors kept with their graphs, a list
of outputs that is never cleared)
adds memory every step. One step up in the second half has a high rank correlation with the step (0.87
when it sits in the middle), so the correlation alone would call it a leak; the block medians rise once.
Why 4 %: after the first tenth, healthy runs stay within 3.2 % of where they were (the family
benchmark's allocator creep, first quarter to last; real RSS of an LSTM trained on random lengths, measured
with psutil, 1.6 % at most), while a real leak of one batch's LSTM activations every 20 steps grew RSS by
4.3-6.6 % (6-10 % end to end over 600 steps) and was missed at the 10 % used until 2026-12-02.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-11-30):
memory_growth 18/18 top-1; all labels 203/243, 2/90 false alarms (docs/doctor.md).
"""

from __future__ import annotations

import numpy as np

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import quarter_medians

GROWTH = 0.04
MIN_GB = 0.01
MIN_TREND = 0.8
BLOCKS = 8
SECOND_HALF_SHARE = 0.1  # of the growth, first quarter to last: a steady leak adds about half of it there
LESSON = "docs/doctor.md#memory_growth"


def check(run) -> list[Finding]:
    for key in ("gpu_memory_gb", "cpu_memory_gb"):
        memory = run.curve(key)
        memory = memory.iloc[len(memory) // 10:]
        if len(memory) < 8:
            continue
        early, late = quarter_medians(memory)
        second = memory.iloc[len(memory) // 2:]
        if late - early < max(MIN_GB, GROWTH * early) or second.nunique() < 2:
            continue
        # Spearman's rank correlation is Pearson's on the ranks; ranking here keeps scipy (which pandas'
        # method="spearman" imports) out of the dependencies.
        steps = second.index.to_series(index=second.index).astype(float)
        trend = second.rank().corr(steps.rank())
        if not trend >= MIN_TREND or not (rises_steadily(memory) or rises_by_many_steps(second)):
            continue
        if not still_adding(second, late - early):
            continue
        return [Finding("memory_growth", confidence(0.8, (late - early) / max(MIN_GB, GROWTH * early)),
                        int(memory.index[0]),
                        f"{key} grew from {early:.3g} to {late:.3g} GB (+{late / early - 1:.0%}) and was still "
                        f"rising at the end (rank correlation with step {trend:.2f})",
                        fix="detach what you keep: loss.item() or loss.detach() for logging, clear lists of "
                            "outputs, no tensors with graphs stored across steps",
                        experiment="log memory every step for 50 steps: a leak adds the same amount each step",
                        lesson=LESSON)]
    return []


def rises_steadily(memory) -> bool:
    """Does ``memory`` (the run after its first tenth) keep rising? Of the medians of ``BLOCKS`` consecutive
    blocks of its second half, at most one below the block before it and at least half of them above it: a
    staircase that steps up once rises at one boundary, a leak at most of them. Memory logged too coarsely
    for that -- fewer distinct values than blocks: a leak of 15 % on 1.2 GB written with one decimal has
    three, and so has an exact peak counter that stepped up twice -- is asked for one rise in each half of
    the run at least: a leak keeps rising, a counter that met its largest batch once does not."""
    values = memory.to_numpy(dtype=float)
    if memory.nunique() < BLOCKS:
        rises = np.flatnonzero(np.diff(values) > 0) + 1
        return len(rises) >= 2 and rises[0] <= len(values) // 2 <= rises[-1]
    second = values[len(values) // 2:]
    blocks = min(BLOCKS, len(second) // 2)
    if blocks < 3:
        return True  # too short to tell a staircase from a slope: the trend test alone decides
    steps = np.diff([np.median(block) for block in np.array_split(second, blocks)])
    return int((steps < 0).sum()) <= 1 and int((steps > 0).sum()) >= blocks // 2


def rises_by_many_steps(second) -> bool:
    """Did the memory of the run's second half (``second``) rise in many steps: its largest record-to-record
    rise under half of all its rises added up?

    Why beside :func:`rises_steadily`: a process's resident memory grows in chunks -- the C allocator maps a
    new arena when the cached tensors outgrow the last one, and hands a little back now and then -- so a
    real leak reads as a staircase with dips, and its block medians rise at only three of seven boundaries
    and dip twice by 0.3 % (an outside long-convolution LM keeping every batch's logits: RSS +20 % in
    psutil's readings, its second half rising by 0.017, 0.018 and 0.007 GB and a creep of 0.001s --
    healthy until 2026-12-05). What a peak counter cannot do is rise in many steps late in the run: it meets
    a batch longer than any before it about ln 2 times in the second half of the batches, so one step up --
    or two -- makes at least half of its rises there."""
    rises = np.diff(second.to_numpy(dtype=float))
    rises = rises[rises > 0]
    return len(rises) > 0 and float(rises.max()) < float(rises.sum()) / 2


def still_adding(second, growth: float) -> bool:
    """Did the run's second half (``second``) add at least ``SECOND_HALF_SHARE`` of the ``growth`` -- the
    rise from its first quarter to its last quarter?

    Why: a leak keeps adding at the rate it leaks, so a steady one adds about half of its growth in the
    second half (measured the same way, quarter to quarter); a process whose memory stepped up once early --
    the allocator mapping an arena for the first evaluation's batch -- and then crept by a page now and
    then rises in the second half as steadily as a leak, at a rank correlation of 0.8, but by a few
    kilobytes of the 22 MB step (0.0-0.07 of it: fourteen outside runs of a MobileNet-style CNN, a voxel
    CNN and a counting CNN, five of them healthy, all memory_growth until 2026-12-07). The slowest real
    leaks measured added 0.13-0.18 of their growth there: a leak growing the heap in arena-sized chunks."""
    early, late = quarter_medians(second)
    return late - early >= SECOND_HALF_SHARE * growth
