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
from chapters.checkpoints.keeper import INDEX_NAME, TopKKeeper, checkpoint_name
from chapters.checkpoints.verify import CheckpointError, newest_good, verify_file
from chapters.core.callbacks import Callback
from chapters.core.data import LineDataset, markov_corpus
from chapters.core.run import build_trainer, preset_config

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
