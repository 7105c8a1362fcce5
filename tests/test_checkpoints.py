"""Checkpoints: atomic files, the top-K keeper, verified loading, exact resume."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chapters.checkpoints.checkpointer import Checkpointer, resume
from chapters.checkpoints.keeper import INDEX_NAME, CheckpointIndexError, TopKKeeper, checkpoint_name
from chapters.checkpoints.verify import CheckpointError, newest_good, verify_file
from chapters.cli import main
from chapters.core.callbacks import Callback
from chapters.core.data import LineDataset, markov_corpus
from chapters.core.run import build_trainer, preset_config
from tests.conftest import clinic

# 640 training lines: with batch 64 an epoch is 10 steps, so a short run crosses epoch boundaries.
SMALL_CORPUS = dataclasses.replace(markov_corpus(64), name="markov-640")
SMALL_CORPUS.train = LineDataset(SMALL_CORPUS.train.tokens[:640])


class StepLosses(Callback):
    """Every step's loss, exactly (tensors compared bit for bit)."""

    def __init__(self):
        self.losses = []

    def on_step_end(self, trainer):
        self.losses.append(trainer.last_loss.clone())


def tiny_trainer(steps, callbacks, **changes):
    # dropout > 0 so the losses also depend on the restored RNG state
    config = preset_config("tiny", steps=steps, device="cpu", batch_size=64, eval_every=5, log_every=5,
                           eval_batches=1, **changes)
    return build_trainer("tiny", config, callbacks, corpus=SMALL_CORPUS, dropout=0.1)


def test_resume_is_bit_identical(tmp_path):
    full = StepLosses()
    tiny_trainer(30, [full]).fit()

    first_half = StepLosses()
    stopper = type("Stop", (Callback,), {"on_step_end": lambda self, t: setattr(t, "should_stop", t.step == 13)})
    trainer = tiny_trainer(30, [first_half, stopper(), Checkpointer(tmp_path, save_every=100, top_k=2)])
    assert trainer.fit() == "stopped"

    second_half = StepLosses()
    resumed = tiny_trainer(30, [second_half, Checkpointer(tmp_path, save_every=100, top_k=2)])
    assert resume(resumed, tmp_path, report=lambda line: None) == 13
    resumed.fit()
    assert len(first_half.losses) == 13 and len(second_half.losses) == 17
    assert all(torch.equal(a, b) for a, b in zip(full.losses, first_half.losses + second_half.losses))


def test_resumed_early_stopping_stops_at_the_same_step(tmp_path):
    """Early stopping's patience is checkpointed: the resumed run stops where the uninterrupted one does."""
    from chapters.core.early_stopping import EarlyStopping

    def stopper():  # nothing improves by 10 nats: best at the first evaluation, stop three evaluations later
        return EarlyStopping(patience=3, min_delta=10.0, restore_best=False)

    uninterrupted = tiny_trainer(60, [stopper()])
    assert uninterrupted.fit() == "stopped"

    interrupt = type("Stop", (Callback,), {"on_step_end": lambda self, t: setattr(t, "should_stop", t.step == 13)})
    first = tiny_trainer(60, [stopper(), interrupt(), Checkpointer(tmp_path, save_every=100, top_k=2)])
    assert first.fit() == "stopped" and first.step == 13  # two evaluations seen: steps 5 and 10

    resumed = tiny_trainer(60, [stopper(), Checkpointer(tmp_path, save_every=100, top_k=2)])
    assert resume(resumed, tmp_path, report=lambda line: None) == 13
    assert resumed.fit() == "stopped"
    assert resumed.step == uninterrupted.step == 20


# ------------------------------------------------------------------------------------- the top-K keeper
def reference_kept(history: dict[int, float | None], latest: int, k: int, mode: str, keep_last: int = 1) -> set[int]:
    """The specification, written as plainly as possible: the K best ranked steps (older wins a tie), plus
    the ``keep_last`` newest (the latest among them)."""
    ranked = [(value if mode == "min" else -value, step) for step, value in history.items() if value is not None]
    return {step for _, step in sorted(ranked)[:k]} | {latest} | set(sorted(history)[-keep_last:])


@settings(max_examples=40, deadline=None)
@given(k=st.integers(0, 4), mode=st.sampled_from(["min", "max"]), restart_at=st.integers(0, 12),
       metrics=st.lists(st.one_of(st.none(), st.sampled_from([1.0, 2.0, 3.0]), st.floats(-5, 5)),
                        min_size=1, max_size=12), keep_last=st.integers(1, 3))
def test_files_on_disk_are_the_k_best_plus_the_latest(tmp_path_factory, k, mode, restart_at, metrics, keep_last):
    directory = tmp_path_factory.mktemp("keeper")
    checkpointer = Checkpointer(directory, save_every=1, top_k=k, metric="objective", mode=mode, keep_last=keep_last)
    history = {}
    for step, value in enumerate(metrics, start=1):
        if step == restart_at:  # a new process: it must take the ranking from the index
            checkpointer = Checkpointer(directory, save_every=1, top_k=k, metric="objective", mode=mode,
                                        keep_last=keep_last)
            checkpointer.keeper.load(directory)
        checkpointer.write(step, f"checkpoint {step}".encode())
        history[step] = None
        if value is not None:  # some steps carry no metric (no evaluation on that step)
            checkpointer.record_metric(step, value)
            history[step] = value
        expected = {checkpoint_name(s) for s in reference_kept(history, step, k, mode, keep_last)}
        assert {p.name for p in directory.glob("*.pt")} == expected
        index = json.loads((directory / INDEX_NAME).read_text())
        assert {e["file"] for e in index["checkpoints"]} == expected


def test_wrong_looking_mode_warns_and_bad_mode_is_rejected():
    with pytest.warns(UserWarning, match="mode='max'"):
        TopKKeeper(3, metric="val_accuracy", mode="min")
    with pytest.warns(UserWarning, match="mode='min'"):
        TopKKeeper(3, metric="val_loss", mode="max")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TopKKeeper(3, metric="val_loss", mode="min")
    with pytest.raises(ValueError, match="'min' or 'max'"):
        TopKKeeper(3, mode="minimum")


def test_resumed_keeper_refuses_an_index_ranked_by_another_metric(tmp_path):
    keeper = TopKKeeper(2)
    keeper.add(1, "0" * 64, 1)
    keeper.save(tmp_path)
    with pytest.raises(CheckpointIndexError, match="ranks by val_loss \\(min\\), not val_acc \\(max\\)"):
        TopKKeeper(2, metric="val_acc", mode="max").load(tmp_path)


# -------------------------------------------------------------------------------- verified loading
@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    """A 12-step run saving every 4 steps (evaluations every 5, so only step 12 gets a val_loss)."""
    directory = tmp_path_factory.mktemp("run")
    tiny_trainer(12, [Checkpointer(directory, save_every=4, top_k=1)]).fit()
    return directory


def copy_dir(source, target):
    target.mkdir()
    for path in source.iterdir():
        (target / path.name).write_bytes(path.read_bytes())
    return target


def test_saved_run_keeps_latest_and_verifies(saved_run):
    # step 12 is the best (the only one ranked) and the latest; step 8 stays as the one before it (keep_last=2)
    assert sorted(p.name for p in saved_run.glob("*.pt")) == ["step-00000008.pt", "step-00000012.pt"]
    found = newest_good(saved_run)
    assert found.step == 12 and found.skipped == []


def test_truncated_latest_falls_back_to_newest_good(tmp_path):
    trainer = tiny_trainer(30, [])
    checkpointer = Checkpointer(tmp_path, save_every=1, top_k=1)
    trainer.step = 8
    checkpointer.save(trainer)
    checkpointer.record_metric(8, 1.0)  # the best: kept
    trainer.step = 12
    checkpointer.save(trainer)  # the latest: kept
    latest = tmp_path / "step-00000012.pt"
    latest.write_bytes(latest.read_bytes()[:1000])
    found = newest_good(tmp_path)
    assert found.step == 8
    assert len(found.skipped) == 1 and "step-00000012.pt" in found.skipped[0] and "sha256" in found.skipped[0]


def test_garbage_without_index_is_reported_not_loaded(saved_run, tmp_path):
    directory = copy_dir(saved_run, tmp_path / "d")
    (directory / INDEX_NAME).write_text("{not json")
    for path in directory.glob("*.pt"):
        path.write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError, match="step-00000012.pt: not a readable checkpoint"):
        verify_file(directory / "step-00000012.pt")
    assert newest_good(directory) is None


def test_fresh_run_refuses_a_directory_with_checkpoints(saved_run, tmp_path):
    directory = copy_dir(saved_run, tmp_path / "d")
    with pytest.raises(CheckpointError, match="already holds checkpoints"):
        tiny_trainer(4, [Checkpointer(directory, save_every=1)]).fit()
    assert (directory / "step-00000012.pt").exists()


# ---------------------------------------------------------------------------------------- the CLI
def test_clinic_ckpt_list_and_verify(saved_run, tmp_path):
    listed = clinic("ckpt", "list", str(saved_run))
    assert listed.returncode == 0, listed.stderr
    header, previous, row = listed.stdout.splitlines()
    assert header.split() == ["step", "val_loss", "rank", "size", "verified"]
    assert previous.split()[0] == "8" and previous.split()[-1] == "yes"
    assert row.split()[0] == "12" and row.split()[2:4] == ["1", "latest"] and row.split()[-1] == "yes"

    assert main(["ckpt", "verify", str(saved_run)]) == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["ckpt", "verify", str(empty)]) == 1
    missing = clinic("ckpt", "verify", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "is not a directory" in missing.stderr and "Traceback" not in missing.stderr


def test_clinic_ckpt_verify_names_the_corrupt_latest_and_falls_back(tmp_path, capsys):
    trainer = tiny_trainer(30, [])
    checkpointer = Checkpointer(tmp_path, save_every=1, top_k=1)
    for step, value in ((4, 1.0), (8, None)):
        trainer.step = step
        checkpointer.save(trainer)
        if value is not None:
            checkpointer.record_metric(step, value)
    (tmp_path / "step-00000008.pt").write_bytes(b"truncated")
    assert main(["ckpt", "verify", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "step-00000004.pt (step 4)" in out
    assert "step-00000008.pt: sha256 does not match" in err


def test_clinic_train_refuses_foreign_checkpoints_and_unverifiable_resume(saved_run, tmp_path):
    directory = copy_dir(saved_run, tmp_path / "d")
    base = ("train", "--steps", "2", "--ckpt-dir", str(directory), "--out", str(tmp_path / "run"), "--quiet")
    fresh = clinic(*base)
    assert fresh.returncode == 2 and "already holds checkpoints (step-00000008.pt, step-00000012.pt); use --resume" \
        in fresh.stderr
    assert len(fresh.stderr.strip().splitlines()) == 1
    for path in directory.glob("*.pt"):
        path.write_bytes(b"garbage")
    broken = clinic(*base, "--resume")
    assert broken.returncode == 1 and "passes verification" in broken.stderr and "Traceback" not in broken.stderr
    assert (directory / "step-00000012.pt").read_bytes() == b"garbage"  # nothing deleted or overwritten
