"""The training doctor: read a run's metrics log, name what is wrong, show the evidence, say what to do.

    from chapters.doctor import diagnose
    print(diagnose("runs/tiny").to_json())

Each rule family is one module (``nan``, ``divergence``, ``gradients``, ...) whose docstring gives its
statistic, its threshold and why; ``docs/doctor.md`` collects them in one table. The live variant --
the same rules inside a training run -- is :class:`chapters.doctor.live.DoctorCallback`. Logs are read with
the course's one reader, :class:`chapters.records.runlog.RunLog`; ``diagnose_run`` takes one built any way.
"""

from __future__ import annotations

from chapters.doctor.findings import LABELS, Diagnosis, Finding
from chapters.doctor.rules import diagnose_run
from chapters.records.runlog import RunLog


def diagnose(path) -> Diagnosis:
    """Diagnose the log at ``path`` (a ``metrics.jsonl`` or a run directory holding one).

    Raises ``MetricsLogError`` (one line, naming the problem) when the log cannot be used at all.
    """
    return diagnose_run(RunLog.load(path))


__all__ = ["LABELS", "Diagnosis", "Finding", "diagnose", "diagnose_run"]
