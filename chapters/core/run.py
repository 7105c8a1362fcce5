"""Assemble a run from names: a model preset, the corpus, a TrainConfig and callbacks.

This is the path the CLI, the scenarios and the notebooks share, so "the tiny preset with seed 3" means
the same model, data and initial weights everywhere.
"""

from __future__ import annotations

import dataclasses

from chapters.core.callbacks import Callback
from chapters.core.data import Corpus, markov_corpus
from chapters.core.devices import seed_everything
from chapters.core.model import GPT, PRESETS
from chapters.core.trainer import TrainConfig, Trainer

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
                  corpus: Corpus | None = None, **model_overrides) -> Trainer:
    """Seed, load the corpus, build the model, wrap it in a Trainer -- in that order, so the initial
    weights depend only on the seed."""
    check_preset(preset)
    config = config or preset_config(preset)
    corpus = corpus or markov_corpus(DEFAULT_SEQ_LEN[preset])
    seed_everything(config.seed)
    model = build_model(preset, corpus.tokenizer.vocab_size, **model_overrides)
    return Trainer(model, corpus, config, callbacks)
