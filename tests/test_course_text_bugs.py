"""Every bug of the course text's checkpoint code happens, and our version does not have it."""

from __future__ import annotations

import os
import pickle

import pytest
import torch

from chapters.checkpoints.checkpointer import Checkpointer
from chapters.checkpoints.course_text_bugs import NaiveTopK, naive_safe_load
from chapters.checkpoints.keeper import TopKKeeper
from chapters.checkpoints.verify import CheckpointError, load_weights_strict, probe_forward
from chapters.core.model import GPT, GPTConfig


def naive_save(keeper, value):
    """Each save ends in the NameError of bug 3 -- after the files have been written and deleted."""
    with pytest.raises(NameError, match="metric_name"):
        keeper.maybe_save({"value": value}, {"val_loss": value})


def test_naive_top_k_reuses_names_and_deletes_what_it_keeps(tmp_path):
    keeper = NaiveTopK(tmp_path, k=2)
    for value in (5.0, 4.0, 3.0, 2.0, 1.0):
        naive_save(keeper, value)
    assert [value for value, _ in keeper.kept] == [1.0, 2.0]  # it believes it keeps two checkpoints...
    assert len({path for _, path in keeper.kept}) == 1  # ...under one reused name (bug 1)...
    assert not any(os.path.exists(path) for _, path in keeper.kept)  # ...which it deleted (bug 2)


def test_naive_top_k_forgets_its_ranking_on_restart(tmp_path):
    naive_save(NaiveTopK(tmp_path, k=1), 1.0)
    restarted = NaiveTopK(tmp_path, k=1)
    assert restarted.kept == []  # bug 4: the better checkpoint on disk is unknown to the new run
    naive_save(restarted, 9.0)  # the worse value is "kept" and overwrote ckpt_0.pt
    assert torch.load(tmp_path / "ckpt_0.pt")["value"] == 9.0


def test_our_keeper_keeps_k_best_under_distinct_names_across_restarts(tmp_path):
    checkpointer = Checkpointer(tmp_path, save_every=1, top_k=2)
    for step, value in enumerate((5.0, 4.0, 3.0, 2.0, 1.0), start=1):
        checkpointer.write(step, b"x")
        checkpointer.record_metric(step, value)
    assert sorted(p.name for p in tmp_path.glob("*.pt")) == ["step-00000004.pt", "step-00000005.pt"]
    restarted = TopKKeeper(2)
    restarted.load(tmp_path)
    assert [e.metric for e in restarted.best()] == [1.0, 2.0]


class Boobytrap:
    """Unpickling this calls ``os.makedirs(marker)``: proof that loading ran code from the file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.makedirs, (self.marker,))


def test_naive_safe_load_unpickles_code_and_accepts_a_wrong_model(tmp_path):
    model = GPT(GPTConfig(vocab_size=1000, n_layer=1))
    path = tmp_path / "bad.pt"
    # bug 6: an object whose unpickling calls a function -- full pickle runs it; weights_only refuses it
    torch.save({"model": {"not.a.weight": torch.zeros(1)}, "payload": Boobytrap(tmp_path / "ran")}, path)
    logits = naive_safe_load(model, path)  # bug 5: none of the keys match, and it "succeeds"
    assert (tmp_path / "ran").is_dir()
    assert logits.shape == (1, 16, 1000)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True)
    with pytest.raises(CheckpointError, match="missing .*unexpected \\['not.a.weight'\\]"):
        load_weights_strict(model, {"not.a.weight": torch.zeros(1)})


def test_naive_safe_load_probe_crashes_on_a_small_vocabulary(tmp_path):
    model = GPT(GPTConfig(vocab_size=33, n_layer=1))
    torch.save({"model": model.state_dict()}, tmp_path / "ok.pt")
    with pytest.raises(IndexError):  # bug 7: ids up to 999 in a 33-row embedding
        naive_safe_load(model, tmp_path / "ok.pt")
    probe_forward(model)  # ours draws ids from the model's own vocabulary
