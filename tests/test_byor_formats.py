"""Bring your own run: reading TensorBoard, Hugging Face Trainer and CSV logs (chapters/records/formats)."""

from __future__ import annotations

import json
import math

import pytest
from torch.utils.tensorboard import SummaryWriter

from chapters.cli import main
from chapters.errors import MetricsLogError
from chapters.records.formats import (Renamer, contract_name, csv_log, hf_trainer, records_from_columns,
                                      split_by_kind, tensorboard)
from chapters.records.formats.detect import detect, load, open_run


def write_events(folder, points):
    """points: {tag: [(step, value), ...]} through torch's real SummaryWriter."""
    writer = SummaryWriter(str(folder))
    for tag, series in points.items():
        for step, value in series:
            writer.add_scalar(tag, value, global_step=step)
    writer.close()
    return folder


@pytest.mark.parametrize("spelling, name", [
    ("train/loss", "train_loss"), ("loss", "train_loss"), ("train_loss", "train_loss"), ("eval/loss", "val_loss"),
    ("eval_loss", "val_loss"), ("val/loss", "val_loss"), ("learning_rate", "lr"), ("lr-AdamW", "lr"),
    ("lr-SGD", "lr"), ("train/grad_norm", "grad_norm"), ("global_step", "step"), ("Train/Loss", "train_loss"),
    ("Loss/valid", "val_loss"), ("validation/loss", "val_loss"), ("test/loss", None),
    ("lr-AdamW/pg1", None), ("eval/accuracy", None), ("grad_norm/mlp", None), ("lossy", None),
])
def test_common_spellings_map_onto_the_contract(spelling, name):
    assert contract_name(spelling) == name


def test_each_contract_key_is_taken_once_and_the_rest_passes_through():
    keys = ("train/loss", "loss", "eval/accuracy", "learning_rate")
    rename = Renamer(keys)
    assert [rename(k) for k in keys] == ["train_loss", "loss", "eval/accuracy", "lr"]
    assert rename.describe() == "mapped train/loss -> train_loss, learning_rate -> lr"
    exact = Renamer(["loss", "train_loss"])  # the contract's own spelling keeps its name
    assert [exact(k) for k in ("loss", "train_loss")] == ["loss", "train_loss"]


def test_tensorboard_scalars_become_train_and_eval_records(tmp_path):
    write_events(tmp_path, {"train/loss": [(1, 2.0), (2, math.nan)], "eval/loss": [(2, 1.5)],
                            "train/learning_rate": [(1, 0.1), (2, 0.1)], "custom/thing": [(1, 7.0)]})
    run = tensorboard.read(tmp_path)
    assert run.events[0]["event"] == "run_start"
    train = [r for r in run.metrics if "val_loss" not in r]
    evals = [r for r in run.metrics if "val_loss" in r]
    assert [r["step"] for r in train] == [1, 2] and train[0]["custom/thing"] == 7.0
    assert math.isnan(train[1]["train_loss"]), "a NaN loss must reach the doctor as NaN"
    assert evals == [{"step": 2, "val_loss": 1.5}]
    assert "train/loss -> train_loss" in run.description and "eval/loss -> val_loss" in run.description


def test_fast_path_agrees_with_the_event_accumulator(tmp_path):
    write_events(tmp_path, {"loss": [(s, 1 / s if s != 7 else math.inf) for s in range(1, 40)],
                            "grad_norm": [(s, s * 0.5) for s in range(1, 40, 3)]})
    files = sorted(tmp_path.glob(tensorboard.EVENT_FILE))
    fast = tensorboard._fast_scalars(files)
    reference = tensorboard._accumulated_scalars(tmp_path)
    assert fast is not None and fast.keys() == reference.keys()
    for tag in fast:
        assert fast[tag][0] == reference[tag][0]
        assert [repr(v) for v in fast[tag][1]] == [repr(v) for v in reference[tag][1]]


def test_columns_hold_the_records_split_by_kind_would_make():
    series = {"train_loss": ([1, 2, 2, 3], [1.0, 9.0, 2.0, math.nan]), "epoch": ([1, 2, 3], [0.0, 0.0, 1.0]),
              "val_loss": ([2], [1.5]), "eval/acc": ([2, 3], [0.5, 0.6]), "grad_norm": ([3], [4.0])}
    expected = []
    for step in (1, 2, 3):
        values = {name: vs[max(i for i, s in enumerate(ss) if s == step)]
                  for name, (ss, vs) in series.items() if step in ss}
        expected += split_by_kind(step, values)
    got = records_from_columns(tensorboard.columns_of(series))
    key = lambda r: (r["step"], "val_loss" in r or "eval/acc" in r)  # noqa: E731
    assert [repr(r) for r in sorted(got, key=key)] == [repr(r) for r in sorted(expected, key=key)]


def test_a_cut_off_event_file_is_left_to_the_accumulator(tmp_path):
    write_events(tmp_path, {"loss": [(s, 1.0) for s in range(1, 20)]})
    [file] = tmp_path.glob(tensorboard.EVENT_FILE)
    file.write_bytes(file.read_bytes()[:-7])  # a writer killed mid-record
    assert tensorboard._fast_scalars([file]) is None
    assert len(tensorboard.read(tmp_path).metrics) == 18


def test_several_runs_are_listed_and_one_is_chosen(tmp_path, capsys):
    for name, loss in (("lr_small", 2.0), ("lr_big", 3.0)):
        write_events(tmp_path / name, {"train/loss": [(s, loss) for s in range(1, 30)]})
    assert tensorboard.list_runs(tmp_path) == ["lr_big", "lr_small"]
    assert main(["diagnose", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--run" in error and "lr_big, lr_small" in error
    assert main(["diagnose", str(tmp_path), "--run", "lr_big", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["verdict"] in ("healthy", "anomalous")
    assert "as tensorboard" in captured.err and "train/loss -> train_loss" in captured.err
    assert main(["diagnose", str(tmp_path), "--run", "nope"]) == 2
    assert "no run is named" in capsys.readouterr().err


def test_add_scalars_curves_are_read_with_their_run_not_as_runs(tmp_path, capsys):
    """SummaryWriter.add_scalars("Loss", {"train": ..., "val": ...}) writes Loss_train/ and Loss_val/ folders."""
    writer = SummaryWriter(str(tmp_path / "run"))
    for step in range(1, 41):
        writer.add_scalars("Loss", {"train": 3.0 - step / 20}, step)
        if step % 10 == 0:
            writer.add_scalars("Loss", {"val": 3.1 - step / 25}, step)
        writer.add_scalar("lr", 1e-3, step)
    writer.close()
    assert sorted(path.name for path in (tmp_path / "run").iterdir() if path.is_dir()) == ["Loss_train", "Loss_val"]
    assert tensorboard.list_runs(tmp_path) == ["run"]
    log, _ = load(tmp_path / "run")
    assert list(log.series("val_loss")) == pytest.approx([2.7, 2.3, 1.9, 1.5])
    assert len(log.series("train_loss")) == 40
    assert not any("backwards" in note for note in log.notes)  # train and eval rows in step order
    assert main(["diagnose", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "Loss/train -> train_loss" in captured.err and "Loss_val/ read as the curve Loss/val" in captured.out


def test_separate_runs_that_log_one_tag_stay_separate_runs(tmp_path):
    for name in ("loss_lr3", "loss_lr1"):  # named <tag>_<something>, but <tag>/<something> is no contract key
        write_events(tmp_path / name, {"loss": [(s, 2.0) for s in range(1, 10)]})
    assert tensorboard.list_runs(tmp_path) == ["loss_lr1", "loss_lr3"]


def test_hf_state_skips_the_summary_entry_and_reads_the_newest_checkpoint(tmp_path):
    history = [{"loss": 2.0, "learning_rate": 1e-3, "grad_norm": 1.0, "epoch": 0.5, "step": 5},
               {"eval_loss": 1.9, "eval_runtime": 0.1, "epoch": 0.5, "step": 5},
               {"loss": 1.0, "learning_rate": 1e-3, "grad_norm": math.nan, "epoch": 1.0, "step": 10},
               {"train_loss": 1.5, "train_runtime": 3.0, "epoch": 1.0, "step": 10}]
    for step, entries in ((5, history[:2]), (10, history)):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        (folder / "trainer_state.json").write_text(json.dumps({"log_history": entries, "max_steps": 10}))
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 64}))
    assert detect(tmp_path) == "hf"
    run = hf_trainer.read(tmp_path)
    assert run.source == tmp_path / "checkpoint-10" / "trainer_state.json"
    assert run.events[0]["vocab_size"] == 64 and run.events[0]["config"] == {"max_steps": 10}
    assert [(r["step"], r.get("train_loss"), r.get("val_loss")) for r in run.metrics] == \
        [(5, 2.0, None), (5, None, 1.9), (10, 1.0, None)]
    assert math.isnan(run.metrics[2]["grad_norm"]) and run.metrics[1]["eval_runtime"] == 0.1


def test_csv_tells_an_empty_cell_from_a_nan(tmp_path):
    (tmp_path / "metrics.csv").write_text("epoch,step,train_loss,val_loss,note\n"
                                          "0,9,2.5,,\n0,9,,2.4,\n0,19,nan,,abc\n,oops,1.0,,\n")
    run = csv_log.read(tmp_path)
    assert [(r["step"], sorted(r)) for r in run.metrics] == \
        [(9, ["epoch", "step", "train_loss"]), (9, ["epoch", "step", "val_loss"]), (19, ["epoch", "step", "train_loss"])]
    assert math.isnan(run.metrics[2]["train_loss"])
    assert any("without a usable step" in note for note in run.notes)
    assert any("not numbers" in note for note in run.notes)


@pytest.mark.parametrize("content, problem", [
    (None, "holds no metrics.jsonl, nor another tool's run log"),
    ("step_count,loss\n1,2\n", "no 'step' column"),
    ("step,loss\n", "holds no metric"),
])
def test_nothing_usable_is_one_line_and_exit_2(tmp_path, capsys, content, problem):
    if content is not None:
        (tmp_path / "metrics.csv").write_text(content)
    for verb in ("diagnose", "plot"):
        assert main([verb, str(tmp_path)]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and problem in error and "Traceback" not in error


def test_broken_inputs_are_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "trainer_state.json").write_text("{not json")
    (tmp_path / "tb").mkdir()
    (tmp_path / "tb" / "events.out.tfevents.1.host").write_bytes(b"\x00garbage that is not a record")
    cases = [[str(tmp_path)], [str(tmp_path / "tb")], [str(tmp_path), "--format", "csv"],
             [str(tmp_path / "tb"), "--format", "hf"]]
    for args in cases:
        assert main(["diagnose", *args]) == 2, args
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "Traceback" not in error, (args, error)


def test_plot_reads_a_foreign_run_and_says_so(tmp_path, capsys):
    write_events(tmp_path / "tb", {"train/loss": [(s, 3 / s) for s in range(1, 30)], "eval/loss": [(10, 1.0)]})
    assert main(["plot", str(tmp_path / "tb"), "-o", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").stat().st_size > 0
    assert "as tensorboard" in capsys.readouterr().err


def test_follow_is_for_our_jsonl_only(tmp_path, capsys):
    write_events(tmp_path, {"loss": [(1, 1.0)]})
    assert main(["diagnose", str(tmp_path), "--follow", "--idle-timeout", "1"]) == 2
    assert "--follow watches" in capsys.readouterr().err


def test_open_run_refuses_an_unknown_format(tmp_path):
    with pytest.raises(MetricsLogError, match="unknown format"):
        open_run(tmp_path, "wandb")
