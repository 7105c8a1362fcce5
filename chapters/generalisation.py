"""The generalisation gap: how much better the model does on the data it trained on than on new data.

Both losses are measured the same way -- the mean loss per token, in ``eval()`` mode (no dropout), over a
whole dataset -- so their ratio says only one thing: how much the model memorised. The training loss the
trainer logs cannot be used for this: it is taken in ``train()`` mode (dropout on, which inflates it), and
averaged over weights that kept changing during the logging window.

The overfitting lesson trains under a :class:`Regularisation` -- the four knobs that close the gap
(dropout, weight decay, more data, fewer steps) -- and measures the result with :func:`measure_gap`. The
grader of ``06_overfitting`` calls the very same two functions on a learner's chosen knobs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from chapters.core.callbacks import Callback
from chapters.core.data import Corpus, LineDataset, markov_corpus
from chapters.core.run import DEFAULT_SEQ_LEN, build_trainer, preset_config
from chapters.scenarios.base import subset_lines


@torch.no_grad()
def mean_loss(model: torch.nn.Module, dataset: LineDataset, batch_size: int = 128) -> float:
    """Mean loss per example over every row of ``dataset``, in eval mode. Leaves the model in eval mode:
    call ``model.train()`` before training it further."""
    model.eval()
    total = 0.0
    for start in range(0, len(dataset), batch_size):
        batch = dataset[list(range(start, min(start + batch_size, len(dataset))))]
        total += model(**batch)["loss"].item() * batch["input_ids"].shape[0]
    return total / len(dataset)


@dataclass(frozen=True)
class Regularisation:
    """The knobs of the overfitting lesson. The defaults are the broken run: nothing holds memorising back."""

    dropout: float = 0.0
    weight_decay: float = 0.0
    lines_per_dialect: int = 16  # training lines per domain: more data is the strongest regulariser
    steps: int = 120  # fewer steps is early stopping decided in advance

    # (lowest, highest) allowed: the lesson's budget. 32 lines is all the extra data there is to get.
    BOUNDS = {"dropout": (0.0, 0.5), "weight_decay": (0.0, 1.0), "lines_per_dialect": (16, 32), "steps": (10, 120)}

    @classmethod
    def from_dict(cls, choice: dict) -> "Regularisation":
        """Validate a plain dict (unknown keys, wrong types and values out of bounds are refused by name)."""
        if not isinstance(choice, dict):
            raise ValueError(f"expected a dict of {', '.join(cls.BOUNDS)}, got {type(choice).__name__}")
        unknown = set(choice) - set(cls.BOUNDS)
        if unknown:
            raise ValueError(f"unknown knob(s) {', '.join(sorted(map(str, unknown)))} "
                             f"(accepted: {', '.join(cls.BOUNDS)})")
        values = {}
        for name, (low, high) in cls.BOUNDS.items():
            value = choice.get(name, getattr(cls, name))
            whole = isinstance(low, int)
            if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
                raise ValueError(f"{name} must be {'an integer' if whole else 'a number'}, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low} and {high}, got {value!r}")
            values[name] = value
        return cls(**values)


def regularised_corpus(regularisation: Regularisation, preset: str = "tiny") -> Corpus:
    corpus = markov_corpus(DEFAULT_SEQ_LEN[preset])
    return dataclasses.replace(corpus, train=subset_lines(corpus.train, regularisation.lines_per_dialect))


def train_regularised(regularisation: Regularisation, seed: int = 0, callbacks: list[Callback] | None = None,
                      eval_every: int = 10**9) -> tuple[torch.nn.Module, Corpus]:
    """Train the tiny GPT on the overfitting lesson's data under ``regularisation``; returns (model, corpus)."""
    corpus = regularised_corpus(regularisation)
    config = preset_config("tiny", steps=regularisation.steps, batch_size=16, seed=seed, device="cpu",
                           weight_decay=regularisation.weight_decay, eval_every=eval_every,
                           log_every=max(1, regularisation.steps // 20))
    trainer = build_trainer("tiny", config, callbacks, corpus=corpus, dropout=regularisation.dropout)
    trainer.fit()
    return trainer.model, corpus


def measure_gap(model: torch.nn.Module, corpus: Corpus) -> dict:
    """``{"train_loss", "val_loss", "gap"}`` with ``gap = val_loss / train_loss`` (1.0: no memorising)."""
    train, val = mean_loss(model, corpus.train), mean_loss(model, corpus.val)
    return {"train_loss": train, "val_loss": val, "gap": val / train}
