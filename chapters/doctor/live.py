"""The doctor while training runs: a callback, and ``--follow`` for a log another process writes.

:class:`DoctorCallback` keeps the records the Trainer hands to callbacks and runs the same rules as
``clinic diagnose`` on them. A finding whose label is in ``stop_on`` sets ``trainer.should_stop``: there is
no point in spending an hour of GPU on a run whose loss went NaN at step 40. Checking a NaN costs nothing,
but the other rules re-read the whole history, so they run every ``check_every`` logging steps.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from chapters.core.callbacks import Callback
from chapters.doctor.findings import Finding
from chapters.doctor.rules import diagnose_run
from chapters.errors import MetricsLogError, NotTextError
from chapters.records.jsonl import run_start_event
from chapters.records.runlog import RunLog


class DoctorCallback(Callback):
    def __init__(self, stop_on=(), check_every: int = 10, stream=None):
        self.stop_on = set(stop_on)
        self.check_every = check_every
        self.stream = stream  # where to print new findings (None: keep them quiet)
        self.metrics: list[dict] = []
        self.events: list[dict] = []
        self.findings: dict[str, Finding] = {}
        self._logs = 0

    def on_run_start(self, trainer):
        self.events.append(run_start_event(trainer))  # the same run_start the JSONL log holds

    def on_log(self, trainer, record):
        self.metrics.append(dict(record))
        self._logs += 1
        loss = record.get("train_loss")
        urgent = isinstance(loss, float) and not math.isfinite(loss)
        if urgent or self._logs % self.check_every == 0:
            self.check(trainer)

    def on_eval_end(self, trainer, record):
        self.metrics.append(dict(record))

    def check(self, trainer=None) -> list[Finding]:
        """Run the rules on the records so far; report new labels, stop on the chosen ones."""
        new = []
        for finding in diagnose_run(RunLog.from_records(self.metrics, self.events)).findings:
            if finding.anomaly not in self.findings:
                self.findings[finding.anomaly] = finding
                new.append(finding)
                if self.stream is not None:
                    print(f"doctor: step {finding.step}: {finding.anomaly} -- {finding.evidence}", file=self.stream)
            if finding.anomaly in self.stop_on and trainer is not None:
                trainer.should_stop = True
        return new


def follow(path: Path, on_findings, poll_seconds: float = 0.2, idle_timeout: float | None = None) -> int:
    """Watch a growing log; call ``on_findings(diagnosis, new_findings)`` when new labels appear.

    Polls the file's size and modification time every ``poll_seconds`` (well inside the promised second)
    and re-diagnoses when they change. Ends when the run writes a ``run_end`` event -- one that was not in
    the log when we started: a resumed run appends a new segment after the old segment's ``run_end``, and
    that is the segment being watched -- or after ``idle_timeout`` seconds without change (None: never).
    Returns the number of polls made. A file that is not text (``NotTextError``) is refused at once.
    """
    seen: set[str] = set()
    last_signature = None
    last_change = time.monotonic()
    polls = 0
    ends_before = None  # run_end events already in the log at the first read: runs that ended before we watched
    while True:
        polls += 1
        try:
            stat = path.stat()
            signature = (stat.st_size, stat.st_mtime_ns)
        except FileNotFoundError:
            signature = None
        if signature is not None and signature != last_signature:
            last_signature, last_change = signature, time.monotonic()
            try:
                run = RunLog.load(path)
            except NotTextError:
                raise
            except MetricsLogError:
                run = None  # an empty or half-written first line: wait for more
            if run is not None:
                diagnosis = diagnose_run(run)
                new = [f for f in diagnosis.findings if f.anomaly not in seen]
                seen.update(f.anomaly for f in new)
                on_findings(diagnosis, new)
                ends = sum(1 for e in run.events if e.get("event") == "run_end")
                if ends_before is None:
                    ends_before = ends if polls == 1 else 0  # a log that appeared later was written while we watched
                if ends > ends_before:
                    return polls
        if idle_timeout is not None and time.monotonic() - last_change > idle_timeout:
            return polls
        time.sleep(poll_seconds)
