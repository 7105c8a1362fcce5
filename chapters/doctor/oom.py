"""``oom``: the run ran out of memory.

Statistic: an ``oom`` event, or a ``run_end`` event with status ``oom``. Threshold: one. The metrics
alone cannot show it (the process dies between two records), which is why the JSONL contract has the event.
"""

from __future__ import annotations

from chapters.doctor.findings import Finding

LESSON = "docs/doctor.md#oom"


def check(run) -> list[Finding]:
    events = [e for e in run.events if e.get("event") == "oom"
              or (e.get("event") == "run_end" and e.get("status") == "oom")]
    if not events:
        return []
    first = events[0]
    step = first.get("step") if isinstance(first.get("step"), int) else None
    message = str(first.get("message", "run ended with status 'oom'"))[:160]
    return [Finding(
        "oom", 0.97, step, f"out of memory at step {step}: {message}",
        fix="smaller micro-batch with gradient accumulation (same effective batch), activation checkpointing, "
            "bf16; free tensors kept across steps",
        experiment="re-run with half the micro-batch and twice the accumulation steps: same loss curve, no OOM",
        lesson=LESSON)]
