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


def small_model(**changes):
    return GPT(GPTConfig(**{"vocab_size": 1000, "block_size": 32, "n_layer": 1, "n_head": 2, "n_embd": 16,
                            **changes}))


def test_strict_false_hides_names_with_a_warning_but_not_shapes(tmp_path, caplog):
    """Bug 5 as it really is: wrong *names* load with a warning line; a wrong *width* raises anyway."""
    torch.save({"model": small_model(n_layer=2).state_dict()}, tmp_path / "deeper.pt")
    with caplog.at_level("WARNING"):
        assert naive_safe_load(small_model(), tmp_path / "deeper.pt") == (0, 0)  # "loads"...
    assert "Unexpected keys in checkpoint" in caplog.text and "blocks.1." in caplog.text  # ...with a warning
    torch.save({"model": small_model(n_embd=32).state_dict()}, tmp_path / "wider.pt")
    with pytest.raises(RuntimeError, match="size mismatch"):
        naive_safe_load(small_model(), tmp_path / "wider.pt")
    with pytest.raises(RuntimeError, match="size mismatch"):  # the same with torch's own call, strict=False
        small_model().load_state_dict(torch.load(tmp_path / "wider.pt")["model"], strict=False)
    with pytest.raises(CheckpointError, match="missing .*unexpected \\['not.a.weight'\\]"):
        load_weights_strict(small_model(), {"not.a.weight": torch.zeros(1)})


TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])


def test_bug_6_depends_on_the_torch_version_and_one_argument_brings_it_back(tmp_path, monkeypatch):
    path = tmp_path / "trap.pt"
    torch.save({"model": small_model().state_dict(), "payload": Boobytrap(tmp_path / "ran")}, path)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    if TORCH_VERSION >= (2, 6):  # the default is weights_only=True: the course text's call refuses the file
        with pytest.raises(pickle.UnpicklingError, match="weights_only"):
            naive_safe_load(small_model(), path)
        assert not (tmp_path / "ran").exists()
    else:  # torch 2.4 and 2.5, which pyproject's torch>=2.4 allows: full pickle by default
        naive_safe_load(small_model(), path)
        assert (tmp_path / "ran").is_dir()
        os.rmdir(tmp_path / "ran")
    # The remaining risk on any version: the "fix" the refusal itself suggests...
    torch.load(path, weights_only=False)
    assert (tmp_path / "ran").is_dir()
    os.rmdir(tmp_path / "ran")
    if TORCH_VERSION >= (2, 6):  # ...or an environment variable that makes every default call full pickle
        monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
        with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
            naive_safe_load(small_model(), path)
        assert (tmp_path / "ran").is_dir()
        os.rmdir(tmp_path / "ran")
    with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True refuses it everywhere
        torch.load(path, weights_only=True)
    assert not (tmp_path / "ran").exists()


def test_naive_safe_load_always_resumes_at_zero(tmp_path):
    """Bug 8: the course text's checkpointer never writes epoch or global_step, its loader defaults to 0."""
    directory = tmp_path / "naive"
    directory.mkdir()
    keeper = NaiveTopK(str(directory), k=1)
    model = small_model()
    state = {"model": model.state_dict(), "metrics": {"val_loss": 2.5, "step": 900}}
    with pytest.raises(NameError):
        keeper.maybe_save(state, {"val_loss": 2.5})
    assert naive_safe_load(small_model(), directory / "ckpt_0.pt") == (0, 0)  # step 900, resumed as step 0


def test_naive_verification_passes_nan_weights(tmp_path, caplog):
    """Bug 9: the probe's shape is right whatever the weights are; ours looks at the numbers."""
    model = small_model()
    with torch.no_grad():
        model.norm_final.weight.fill_(float("nan"))
    torch.save({"model": model.state_dict()}, tmp_path / "nan.pt")
    with caplog.at_level("INFO"):
        naive_safe_load(small_model(), tmp_path / "nan.pt")
    assert "verification passed" in caplog.text
    with pytest.raises(CheckpointError, match="non-finite"):
        probe_forward(model)


def test_naive_safe_load_probe_crashes_on_a_small_vocabulary(tmp_path):
    model = small_model(vocab_size=33)
    torch.save({"model": model.state_dict()}, tmp_path / "ok.pt")
    with pytest.raises(IndexError):  # bug 7: ids up to 999 in a 33-row embedding
        naive_safe_load(model, tmp_path / "ok.pt")
    probe_forward(model)  # ours draws ids from the model's own vocabulary
