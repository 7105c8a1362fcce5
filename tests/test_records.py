"""The one reader, RunLog: the segment rule for resumed logs and the three ways in agree."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

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


def test_the_fast_path_takes_only_lines_that_are_one_object_each(monkeypatch):
    """Brace counts alone let ``{{"step": 40}}`` and ``"step": 41`` through (two of each over two lines), and
    the CSV rows they become parse; neither line is JSON, so the line reader must get the file. Checked with
    chunks of 16 bytes too, so that a line crossing a chunk's seam is read the same."""
    from chapters.records import fast_path

    clean = b"".join(b'{"step": %d, "train_loss": 1.5}\n' % step for step in range(1, 40))
    for chunk in (1 << 17, 16):
        monkeypatch.setattr(fast_path, "_CHUNK", chunk)
        assert fast_path.fast_columns(clean) is not None
        for broken in (b'{{"step": 40}}\n"step": 41\n{"step": 42}\n', b'{"step": 40}}\n{"step": 41\n{"step": 42}\n',
                       b'{"step": 40}\n\n', b'{"step": 40, "lr": {"x": 1}}\n', b'{"step": 40, "lr": [1]}\n'):
            assert fast_path.fast_columns(clean + broken) is None, (chunk, broken)


def read_both_ways(tmp_path, records: list[dict]) -> list[RunLog]:
    """The file (fast path or line reader, whichever takes it) and the same records from memory."""
    return [RunLog.load(write(tmp_path, records)), RunLog.from_records(records)]


def test_a_record_holding_both_losses_is_a_training_and_an_evaluation_record(tmp_path):
    """One record per epoch with train_loss and val_loss (Keras' history, many hand-written loggers): without
    the split the run has no evaluations and the doctor's validation rules see nothing."""
    records = [{"step": 100 * e, "epoch": e, "train_loss": 2.0 - e / 10, "val_loss": 2.1 - e / 20} for e in range(1, 9)]
    for log in read_both_ways(tmp_path, records):
        assert list(log.evals["step"]) == [100 * e for e in range(1, 9)]
        assert list(log.series("val_loss")) == [r["val_loss"] for r in records]
        assert list(log.series("train_loss")) == [r["train_loss"] for r in records]
        assert "val_loss" not in log.train or log.train["val_loss"].isna().all()
        assert list(log.all_rows["kind"]) == [False, True] * 8  # each evaluation right after its record


def test_a_validation_loss_carried_forward_is_one_evaluation(tmp_path):
    """A logger that writes the latest val_loss on every record: each evaluation is kept once, where it
    first appears -- fifty copies would make the validation noise look like zero."""
    records = [{"step": s, "train_loss": 3.0 - s / 100, "val_loss": 2.9 - (s // 50) / 10} for s in range(1, 201)]
    for log in read_both_ways(tmp_path, records):
        assert list(log.evals["step"]) == [1, 50, 100, 150, 200]
        assert len(log.train) == 200 and log.nonfinite_steps() == []


def test_placeholders_of_a_fixed_schema_are_not_written_nans(tmp_path):
    """A table exported to JSON lines writes every key on every row: ``val_loss: null`` where no evaluation
    ran, ``train_loss: null`` on the evaluation's row. Read as written NaNs they made every such log a
    ``nan_loss`` -- but a record whose other loss is finite came from a model with finite weights."""
    records = []
    for s in range(1, 41):
        records.append({"step": s, "train_loss": 2.0 - s / 100, "val_loss": None})
        if s % 10 == 0:
            records.append({"step": s, "train_loss": None, "val_loss": 2.1 - s / 100})
    dead = [{"step": 41, "train_loss": float("nan"), "val_loss": float("nan")}]  # both NaN: a dead run
    for log in read_both_ways(tmp_path, records):
        assert log.nonfinite_steps() == [] and list(log.evals["step"]) == [10, 20, 30, 40]
        assert len(log.series("train_loss")) == 40
    for log in read_both_ways(tmp_path, records + dead):
        assert log.nonfinite_steps() == [41]


def test_a_nan_training_loss_beside_a_carried_validation_loss_is_kept(tmp_path):
    """Where the latest evaluation is carried forward, the finite val_loss beside a NaN train_loss is an old
    one: the NaN is the run's, and the finding stands."""
    records = [{"step": s, "train_loss": 2.0, "val_loss": 1.9} for s in range(1, 6)]
    records.append({"step": 6, "train_loss": float("nan"), "val_loss": 1.9})
    for log in read_both_ways(tmp_path, records):
        assert log.nonfinite_steps() == [6]


def test_a_nan_training_loss_on_a_record_of_both_losses_is_kept(tmp_path):
    """A writer that puts both losses on one record, every evaluation fresh (nothing carried forward): a
    batch whose labels were all ignored logs a NaN training loss while the weights -- and the validation
    loss measured on the same record -- stay finite. Such a writer uses no placeholders; the NaN is the run's."""
    records = [{"step": s, "train_loss": 2.0 - s / 100, "val_loss": 2.1 - s / 90} for s in range(1, 21)]
    records[13]["train_loss"] = float("nan")
    for log in read_both_ways(tmp_path, records):
        assert log.nonfinite_steps() == [14]


def epoch_log(losses, per_epoch: int, every: int = 1) -> list[dict]:
    """Records every ``every`` steps, ``per_epoch`` steps an epoch; ``losses[i]`` is the loss of step i + 1."""
    return [{"step": s, "epoch": (s - 1) // per_epoch, "train_loss": float(losses[s - 1])}
            for s in range(every, len(losses) + 1, every)]


def as_running_means(records: list[dict]) -> list[dict]:
    out, total, count, epoch = [], 0.0, 0, None
    for record in records:
        if record["epoch"] != epoch:
            epoch, total, count = record["epoch"], 0.0, 0
        total, count = total + record["train_loss"], count + 1
        out.append({**record, "train_loss": total / count})
    return out


def test_a_running_mean_over_each_epoch_is_read_back_as_the_window_means():
    """``running_loss / (i + 1)`` logged every step: the reader recognises it and undoes it exactly."""
    rng = np.random.default_rng(0)
    steps = np.arange(1, 801)
    losses = (0.6 + 1.7 * np.exp(-steps / 200)) * np.exp(rng.normal(0, 0.1, 800))
    records = epoch_log(losses, per_epoch=100)
    log = RunLog.from_records(as_running_means(records))
    assert any("running mean" in note for note in log.notes)
    assert np.allclose(log.train["train_loss"].to_numpy(), [r["train_loss"] for r in records], rtol=1e-9)


@pytest.mark.parametrize("kind", ["noisy", "smooth", "class_sorted"])
def test_window_means_are_never_taken_for_a_running_mean(kind):
    """A noisy log, a smooth one (undoing it would put a saw-tooth into it) and a class-sorted saw-tooth
    (jumps at every epoch boundary) are read as written."""
    rng = np.random.default_rng(1)
    steps = np.arange(1, 801)
    trend = 0.6 + 1.7 * np.exp(-steps / 200)
    losses = {"noisy": trend * np.exp(rng.normal(0, 0.1, 800)), "smooth": trend,
              "class_sorted": 0.05 + 2.0 * np.exp(-((steps - 1) % 25) / 4)}[kind]
    for every in (1, 10):
        log = RunLog.from_records(epoch_log(losses, per_epoch=100, every=every))
        assert not any("running mean" in note for note in log.notes), every


def test_a_running_mean_logged_every_ten_steps_gives_the_ten_step_means():
    rng = np.random.default_rng(2)
    losses = (0.6 + 1.7 * np.exp(-np.arange(1, 801) / 200)) * np.exp(rng.normal(0, 0.1, 800))
    running = as_running_means(epoch_log(losses, per_epoch=100))  # over every step...
    logged = [record for record in running if record["step"] % 10 == 0]  # ...written every tenth
    log = RunLog.from_records(logged)
    assert any("running mean" in note for note in log.notes)
    assert np.allclose(log.train["train_loss"].to_numpy(), losses.reshape(-1, 10).mean(axis=1), rtol=1e-9)


def test_other_tools_names_for_the_losses_are_read_as_the_contracts(tmp_path):
    """``loss`` / ``eval_loss`` / ``learning_rate`` (the Hugging Face spellings) in a JSON-lines log: read
    literally the log has no loss, and a NaN in it was 'healthy'."""
    records = [{"step": s, "loss": 2.0 - s / 100, "learning_rate": 1e-3} for s in range(1, 21)]
    records += [{"step": 10, "eval_loss": 1.9}, {"step": 20, "eval_loss": float("nan")}]
    for log in read_both_ways(tmp_path, records):
        assert len(log.series("train_loss")) == 20 and list(log.evals["step"]) == [10, 20]
        assert log.nonfinite_steps() == [20] and "lr" in log.train
        assert any("loss -> train_loss" in note for note in log.notes)
    both = [{"step": s, "train_loss": 1.0, "loss": 5.0} for s in range(1, 5)]  # the contract's name wins
    log = RunLog.from_records(both)
    assert list(log.series("train_loss")) == [1.0] * 4 and "loss" in log.train


def test_a_log_without_any_loss_says_so(tmp_path):
    log = RunLog.from_records([{"step": s, "accuracy": 0.5} for s in range(1, 5)])
    assert any("no train_loss or val_loss" in note for note in log.notes)


@pytest.mark.parametrize("start, count", [
    ({"vocab_size": 100}, 100),
    ({"num_labels": 7}, 7),  # a Hugging Face classifier's config
    ({"config": {"lr": 0.1, "n_classes": 5}}, 5),  # hyper-parameters logged as one dict
    ({"hparams": {"model": {"n_vocab": 50}}}, 50),
    ({"num_classes": 4, "config": {"num_classes": 9}}, 4),  # the top level is the writer's own statement
    ({"num_labels": 1}, None),  # one output: a regression, no ln K
    ({"config": {"lr": 0.1}}, None),
])
def test_run_start_facts_are_found_where_other_trainers_put_them(start, count):
    run = RunLog.from_records([{"step": 1, "train_loss": 1.0}], [{"event": "run_start", "step": 0, **start}])
    assert run.class_count == count


def test_a_nested_fact_is_read_but_never_three_levels_down():
    start = {"event": "run_start", "step": 0, "config": {"steps_per_epoch": 40, "a": {"b": {"loss_floor": 1}}}}
    run = RunLog.from_records([{"step": 1, "train_loss": 1.0}], [start])
    assert run.steps_per_epoch == 40 and run.loss_floor is None


def counted_within_epochs(epochs: int, per_epoch: int, every: int, first: int = 0) -> list[dict]:
    """A loop logging ``{"epoch": e, "step": i}`` (``i`` from ``first``) every ``every`` batches, and an
    evaluation at each epoch's last batch; the loss is the global step / 1000, so a test can check where
    each record landed."""
    rows = []
    for epoch in range(epochs):
        for i in range(first, per_epoch + first):
            done = epoch * per_epoch + i - first + 1
            if (i - first + 1) % every == 0:
                rows.append({"epoch": epoch, "step": i, "train_loss": done / 1000})
        rows.append({"epoch": epoch, "step": per_epoch + first - 1, "val_loss": (epoch + 1) * per_epoch / 1000})
    return rows


@pytest.mark.parametrize("first, declared", [(0, True), (0, False), (1, False)])
def test_a_step_counted_within_its_epoch_is_read_as_steps_since_the_start(tmp_path, first, declared):
    # Read as resumed-run segments, only the last epoch survived (8 of 80 training records).
    start = [{"event": "run_start", "step": 0, **({"steps_per_epoch": 100} if declared else {})}]
    run = RunLog.load(write(tmp_path, start + counted_within_epochs(8, 100, 10, first)))
    assert len(run.train) == 80 and len(run.evals) == 8
    # Every record keeps its order, and the epochs follow one another 100 steps apart.
    assert np.allclose(np.diff(run.train["train_loss"]), 0.01) and run.train["step"].is_monotonic_increasing
    assert np.allclose(np.diff(run.train["step"]), 10) and np.allclose(np.diff(run.evals["step"]), 100)
    assert any("starts again at every epoch" in note for note in run.notes)


def test_epochs_one_step_long_logged_at_one_step_are_told_apart_by_their_epochs():
    rows = [{"epoch": e, "step": 0, "train_loss": 2.0 - e / 100} for e in range(0, 300, 10)]
    run = RunLog.from_records(rows)
    assert len(run.train) == 30 and run.train["train_loss"].is_monotonic_decreasing


def test_a_resumed_run_counting_within_epochs_keeps_its_later_segment(tmp_path):
    rows = counted_within_epochs(6, 50, 5)
    resumed = [dict(r, train_loss=r["train_loss"] + 1) if "train_loss" in r else r
               for r in counted_within_epochs(10, 50, 5)[4 * 11:]]  # again from epoch 4, each epoch 11 rows
    run = RunLog.from_records(rows + resumed)
    assert len(run.train) == 100 and run.train["step"].is_monotonic_increasing
    assert (run.train["train_loss"].iloc[40:] > 1).all() and (run.train["train_loss"].iloc[:40] < 1).all()


@pytest.mark.parametrize("case", ["evaluations carry the next epoch", "resumed", "one epoch"])
def test_steps_counted_from_the_start_are_never_moved(case):
    rows = []
    for step in range(1, 201):
        rows.append({"step": step, "epoch": (step - 1) // 20, "train_loss": 2.0 - step / 1000})
        if step % 20 == 0:
            rows.append({"step": step, "epoch": step // 20, "val_loss": 2.0 - step / 1000})
    if case == "resumed":  # a checkpoint at step 150: steps 151-200 again, in their own epochs
        rows += [dict(r) for r in rows if r["step"] > 150]
    if case == "one epoch":
        rows = [dict(r, epoch=0, step=r["step"] % 20) for r in rows[:21]]
    run = RunLog.from_records(rows)
    assert not any("starts again" in note for note in run.notes)
    if case != "one epoch":
        assert list(run.train["step"]) == list(range(1, 201))
