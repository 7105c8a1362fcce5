"""The one reader, RunLog: the segment rule for resumed logs and the three ways in agree."""

from __future__ import annotations

import json
import math

import pandas as pd

from chapters.records.runlog import RunLog


def write(tmp_path, records: list[dict]):
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def segment(start: int, stop: int, loss: float, floor: float, per_epoch: int) -> list[dict]:
    opening = {"event": "run_start", "step": start - 1, "loss_floor": floor, "steps_per_epoch": per_epoch}
    records = [{"step": s, "train_loss": loss + s / 1000} for s in range(start, stop + 1)]
    records.append({"step": stop, "val_loss": loss})
    return [opening, *records, {"event": "run_end", "step": stop, "status": "failed" if start == 1 else "completed"}]


def test_resumed_log_last_run_start_counts_all_metrics_kept_later_steps_win(tmp_path):
    # segment 1: steps 1-30, crashes; segment 2 resumes from a checkpoint at step 20 and goes on to 50
    log = RunLog.load(write(tmp_path, segment(1, 30, 2.0, 0.9, 10) + segment(21, 50, 1.0, 0.8, 25)))
    assert log.segments == 2
    assert (log.loss_floor, log.steps_per_epoch, log.status) == (0.8, 25, "completed")
    losses = log.series("train_loss")
    assert list(losses.index) == list(range(1, 51))  # every step of both segments, once
    assert losses[10] == 2.0 + 10 / 1000 and losses[25] == 1.0 + 25 / 1000  # 21-30: the later segment's
    assert list(log.evals["step"]) == [30, 50] and any("repeat a step" in note for note in log.notes)


def test_nonfinite_steps_come_from_written_values_and_nan_events(tmp_path):
    records = [{"step": 1, "train_loss": 2.0}, {"step": 2, "train_loss": float("nan")},
               {"step": 3, "train_loss": 2.0, "lr": float("nan")},  # lr: not a loss, not a finding
               {"step": 3, "val_loss": float("inf")}, {"event": "nan", "step": 5}]
    for log in (RunLog.load(write(tmp_path, records)),
                RunLog.from_records([r for r in records if "event" not in r], [records[-1]])):
        assert log.nonfinite_steps() == [2, 3, 5]
        assert math.isnan(log.series("train_loss")[2])  # a written NaN is kept, never dropped


def test_from_frame_reads_like_the_file(tmp_path):
    records = [{"step": s, "train_loss": 3.0 - s / 10, "grad_norm": 1.0} for s in range(1, 21)]
    records += [{"step": 10, "val_loss": 2.5}, {"step": 20, "val_loss": 2.0}]
    events = [{"event": "run_start", "step": 0, "loss_floor": 1.2, "steps_per_epoch": 5}]
    from_file = RunLog.load(write(tmp_path, events + records))
    frame = pd.DataFrame(records)  # eval rows: NaN train_loss and grad_norm, i.e. not logged
    from_frame = RunLog.from_frame(frame, events)
    for name in ("train", "evals", "nonfinite", "all_rows"):
        left, right = getattr(from_file, name), getattr(from_frame, name)
        assert left.sort_index(axis=1).equals(right.sort_index(axis=1)), name
    assert from_frame.loss_floor == 1.2


def test_from_frame_object_column_carries_a_written_nan():
    frame = pd.DataFrame({"step": [1, 2, 3], "train_loss": pd.Series([2.0, float("nan"), None], dtype=object)})
    log = RunLog.from_frame(frame)
    assert log.nonfinite_steps() == [2] and list(log.train["step"]) == [1, 2, 3]


def test_a_course_log_takes_the_fast_path_and_a_wrong_type_does_not(tmp_path):
    """A log the course's own writer wrote must be read by the fast path (or a million records take the slow
    one unnoticed); a value written as text, a boolean or a non-integer step must not: pandas would quietly
    read them as numbers, while the contract refuses them line by line."""
    from chapters.labelled_runs import Case, generate
    from chapters.records.fast_path import fast_columns

    log = generate(Case("mlp", "healthy", seed=0), tmp_path / "run")
    raw = (log if log.is_file() else log / "metrics.jsonl").read_bytes()
    assert fast_columns(raw) is not None
    for wrong in ('{"step": "7", "train_loss": 1.0}', '{"step": 7, "train_loss": "1.0"}',
                  '{"step": 7.0, "train_loss": 1.0}', '{"step": 7, "train_loss": true}', '{"train_loss": 1.0}'):
        assert fast_columns(raw + wrong.encode() + b"\n") is None, wrong
