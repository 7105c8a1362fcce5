"""``memory_growth``: memory keeps growing as training goes on (a leak).

Statistic: ``gpu_memory_gb`` (or ``cpu_memory_gb``) after the first 10 % of the run (allocations of the
first steps -- optimizer state, caches -- are normal). Threshold: the median of the last quarter is at least
``GROWTH`` (10 %) and ``MIN_GB`` above the median of the first quarter, and memory still rises in the second
half (Spearman rank correlation with the step above ``MIN_TREND``). Why the trend test: a peak-memory
counter that steps up once and stays flat is a bigger batch or a longer sequence, not a leak; a leak -- loss
tensors kept with their graphs, a list of outputs that is never cleared -- grows every step.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-11-30):
memory_growth 18/18 top-1; all labels 203/243, 2/90 false alarms (docs/doctor.md).
"""

from __future__ import annotations

from chapters.doctor.findings import Finding, confidence

GROWTH = 0.1
MIN_GB = 0.01
MIN_TREND = 0.8
LESSON = "docs/doctor.md#memory_growth"


def check(run) -> list[Finding]:
    for key in ("gpu_memory_gb", "cpu_memory_gb"):
        memory = run.curve(key)
        memory = memory.iloc[len(memory) // 10:]
        if len(memory) < 8:
            continue
        quarter = max(2, len(memory) // 4)
        early, late = float(memory.iloc[:quarter].median()), float(memory.iloc[-quarter:].median())
        second = memory.iloc[len(memory) // 2:]
        if late - early < max(MIN_GB, GROWTH * early) or second.nunique() < 2:
            continue
        # Spearman's rank correlation is Pearson's on the ranks; ranking here keeps scipy (which pandas'
        # method="spearman" imports) out of the dependencies.
        steps = second.index.to_series(index=second.index).astype(float)
        trend = second.rank().corr(steps.rank())
        if not trend >= MIN_TREND:
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
