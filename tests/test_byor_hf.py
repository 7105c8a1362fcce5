"""A real ``transformers.Trainer`` run (a tiny GPT-2 built from a config: random weights, no download)
read by the doctor from its ``trainer_state.json`` and from its TensorBoard events. Skipped when
``transformers`` (or ``accelerate``, which its Trainer needs) is not installed."""

from __future__ import annotations

import math
from unittest import mock

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

import torch  # noqa: E402

from chapters.cli import main  # noqa: E402
from chapters.records.formats.detect import load  # noqa: E402


@pytest.fixture(scope="module")
def hf_output(tmp_path_factory):
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    out = tmp_path_factory.mktemp("hf-run")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=1, n_head=2))
    tokens = torch.randint(0, 32, (64, 16), generator=torch.Generator().manual_seed(0))
    data = [{"input_ids": row, "labels": row} for row in tokens]
    args = TrainingArguments(output_dir=str(out), max_steps=20, per_device_train_batch_size=8, logging_steps=5,
                             eval_strategy="steps", eval_steps=10, save_strategy="steps", save_steps=20,
                             report_to=["tensorboard"], use_cpu=True, seed=0,
                             disable_tqdm=True)
    # This repository's data folder is named datasets/ and, on sys.path, poses as Hugging Face's `datasets`
    # package, which the Trainer then takes as installed: tell it the truth.
    with mock.patch("transformers.trainer.is_datasets_available", return_value=False):
        Trainer(model=model, args=args, train_dataset=data, eval_dataset=data[:16]).train()
    return out


def test_trainer_state_maps_onto_the_contract(hf_output):
    run_log, source = load(hf_output)
    assert source.format == "hf" and source.foreign.source.parent.name == "checkpoint-20"
    assert {"train_loss", "lr", "grad_norm", "epoch"} <= set(run_log.train.columns)
    assert run_log.train["step"].tolist() == [5, 10, 15, 20]
    assert run_log.evals["step"].tolist() == [10, 20] and run_log.evals["val_loss"].notna().all()
    assert run_log.info("vocab_size") == 32, "read from the checkpoint's config.json"
    assert all(math.isfinite(v) for v in run_log.train["train_loss"])


def test_its_tensorboard_events_read_as_the_same_run(hf_output):
    state, _ = load(hf_output)
    events, source = load(hf_output, "tensorboard")  # wherever this version of transformers put them
    assert source.format == "tensorboard"
    assert events.train["step"].tolist() == state.train["step"].tolist()
    assert events.train["train_loss"].tolist() == pytest.approx(state.train["train_loss"].tolist(), rel=1e-6)
    assert events.evals["val_loss"].tolist() == pytest.approx(state.evals["val_loss"].tolist(), rel=1e-6)


def test_clinic_says_what_it_read(hf_output, capsys):
    assert main(["diagnose", str(hf_output)]) == 0
    error = capsys.readouterr().err
    assert "as hf" in error and "loss -> train_loss" in error and "eval_loss -> val_loss" in error
    assert main(["diagnose", str(hf_output), "--format", "tensorboard"]) == 0
    assert "train/loss -> train_loss" in capsys.readouterr().err
