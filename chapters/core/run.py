"""Assemble a run from names: a model preset, the corpus, a TrainConfig and callbacks.

:func:`build_trainer` is the one place that assembles a run (seed -> corpus -> model -> Trainer). The CLI,
the scenarios, the overfitting lesson, the graders and the notebooks share it, so "the tiny preset with
seed 3" means the same model, data and initial weights everywhere. Its seams are what those callers vary:
the corpus (a subset, a text file), model overrides (``dropout=0.1``), ``prepare_model`` (freeze or wrap
the fresh model before the optimizer sees it) and ``batch_transform`` (a deliberate bug, or its guard).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch

from chapters.core.callbacks import Callback
from chapters.core.data import Corpus, markov_corpus
from chapters.core.devices import seed_everything
from chapters.core.model import GPT, PRESETS
from chapters.core.trainer import BatchTransform, TrainConfig, Trainer

DEFAULT_SEQ_LEN = {"tiny": 64, "small": 128}

# Training settings that suit each preset: a small model tolerates (and needs) a larger learning rate.
PRESET_TRAINING = {
    "tiny": {"steps": 600, "lr": 1e-2, "batch_size": 32},
    "small": {"steps": 2000, "lr": 1e-3, "batch_size": 64},
}


def check_preset(preset: str) -> None:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r} (accepted: {', '.join(PRESETS)})")


def preset_config(preset: str, **changes) -> TrainConfig:
    """The preset's recommended TrainConfig, with ``changes`` applied on top."""
    check_preset(preset)
    return TrainConfig(**{**PRESET_TRAINING[preset], **changes})


def build_model(preset: str, vocab_size: int, **overrides) -> GPT:
    """A fresh model of the named preset. ``overrides`` change config fields (``dropout=0.1``...)."""
    check_preset(preset)
    return GPT(dataclasses.replace(PRESETS[preset], vocab_size=vocab_size, **overrides))


def build_trainer(preset: str = "tiny", config: TrainConfig | None = None, callbacks: list[Callback] | None = None,
                  corpus: Corpus | None = None, prepare_model: Callable[[GPT], torch.nn.Module] | None = None,
                  batch_transform: BatchTransform | None = None, **model_overrides) -> Trainer:
    """Load the corpus, seed, build the model, wrap it in a Trainer -- in that order, so the initial
    weights depend only on the seed (not on what the corpus or the caller drew before)."""
    check_preset(preset)
    config = config or preset_config(preset)
    corpus = corpus or markov_corpus(DEFAULT_SEQ_LEN[preset])
    seed_everything(config.seed)
    model = build_model(preset, corpus.tokenizer.vocab_size, **model_overrides)
    if prepare_model is not None:
        model = prepare_model(model)  # before the Trainer: its optimizer takes what is trainable now
    return Trainer(model, corpus, config, callbacks, batch_transform=batch_transform)
