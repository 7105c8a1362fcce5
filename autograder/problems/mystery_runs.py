"""Checks for ``09_mystery_runs``: diagnose unlabelled logs, then fix a broken training script.

Diagnosis: the logs come from :mod:`chapters.doctor.mystery` (the doctor's benchmark MLP, one fault each,
drawn from the seed with its own onset step). The judge knows each log's fault and onset from the seed alone,
so it trains nothing: the label must be the fault, the evidence step must fall in the window where the log
shows it (``evidence_window``), and a fix must be written.

Training: the learner's fixed script saves its weights to a file; the judge loads them into the tiny GPT *with*
its causal mask and measures the loss on validation rows it draws from the seed.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random

import torch

from autograder.checks import CheckFailed, artifact, register_with_hidden
from chapters.core.data import markov_corpus
from chapters.core.model import GPT, PRESETS
from chapters.doctor.benchmark import onset
from chapters.doctor.findings import LABELS
from chapters.doctor.mystery import draw_cases, write_mystery_logs

LATE = 20  # steps after the onset a log may first show it (records every 5 steps, NaN a few steps later)
EARLY = 5  # steps before the onset: the record of the step where it starts
FROM_THE_START = 50  # faults present from step 1 show in the first records


def evidence_window(case) -> tuple[int, int]:
    start = onset(case)
    return (0, FROM_THE_START) if start == 0 else (start - EARLY, start + LATE)


class Diagnose:
    @staticmethod
    def prepare(seed, folder):
        return [str(path.relative_to(folder)) for path in write_mystery_logs(seed, folder / "logs")]

    @staticmethod
    def judge(seed, observation):
        cases = draw_cases(seed)
        if len(observation) != len(cases):
            raise CheckFailed(f"expected one answer per log ({len(cases)}), got {len(observation)}")
        for number, (case, answer) in enumerate(zip(cases, observation), 1):
            if answer["anomaly"] not in LABELS:
                raise CheckFailed(f"run-{number}: {answer['anomaly']!r} is not a doctor label "
                                  f"({', '.join(LABELS)})")
            if answer["anomaly"] != case.fault:
                raise CheckFailed(f"run-{number}: you said {answer['anomaly']}; look again at the evidence")
            low, high = evidence_window(case)
            if not low <= answer["step"] <= high:
                raise CheckFailed(f"run-{number} ({case.fault}): step {answer['step']} is not where the log first "
                                  f"shows it (between steps {low} and {high})")
            if len(answer["fix"].split()) < 2:
                raise CheckFailed(f"run-{number}: say in a few words what to change (fix: {answer['fix']!r})")


DIAGNOSE_HINT = ("look for, in order: an oom event, the first non-finite train_loss, a jump in lr, a jump in "
                 "grad_norm, a grad_norm/<group> that is always 0, a loss that never moves")
register_with_hidden("09_mystery_runs.diagnose", hint=DIAGNOSE_HINT)(Diagnose)


# ---------------------------------------------------------------------------------- causality probe
LEAKS = {"causal": False, "no_mask": True, "sees_next_token": True}


@functools.lru_cache(maxsize=8)  # the oracle asks for them once per question
def probe_models(seed: int) -> list[tuple[str, GPT]]:
    """Small random GPTs, some of which can see the future: no mask, or fed the next token as well."""
    rng = random.Random(seed)
    kinds = ["causal", "no_mask", "sees_next_token", "causal"] if seed == 0 else \
        [rng.choice(list(LEAKS)) for _ in range(5)]
    models = []
    for index, kind in enumerate(kinds):
        torch.manual_seed(seed * 100 + index)
        config = dataclasses.replace(PRESETS["tiny"], vocab_size=rng.choice([20, 33, 50]),
                                     n_layer=rng.randint(1, 2), causal=kind != "no_mask")
        models.append((kind, GPT(config).eval()))
    return models


class FutureLeak:
    @staticmethod
    def prepare(seed, folder):
        return [{"vocab_size": model.config.vocab_size} for _, model in probe_models(seed)]

    @staticmethod
    def oracle(seed, request):
        """The logits of model ``request["model"]`` for ``request["ids"]``, computed here: the child never
        holds the models (a config, a closure or a flag would tell which ones see the future)."""
        kind, model = probe_models(seed)[int(request["model"])]
        ids = torch.tensor(request["ids"], dtype=torch.long)
        if ids.dim() != 2 or not 0 < ids.shape[0] <= 64 or not 0 < ids.shape[1] <= model.config.block_size:
            raise ValueError(f"ids must be a [batch <= 64, length <= {model.config.block_size}] list of lists")
        if ids.min() < 0 or ids.max() >= model.config.vocab_size:
            raise ValueError(f"ids must be in 0..{model.config.vocab_size - 1}")
        with torch.no_grad():
            if kind == "sees_next_token":  # each position also reads the token after it: a leak through the input
                ids = (ids + ids.roll(-1, dims=1)) % model.config.vocab_size
            return model(ids)["logits"].tolist()

    @staticmethod
    def judge(seed, observation):
        kinds = [kind for kind, _ in probe_models(seed)]
        if len(observation) != len(kinds):
            raise CheckFailed(f"expected {len(kinds)} answers, got {len(observation)}")
        for number, (kind, got) in enumerate(zip(kinds, observation), 1):
            if got != LEAKS[kind]:
                raise CheckFailed(f"model {number} {'can' if LEAKS[kind] else 'cannot'} see the future; you said "
                                  f"{'it can' if got else 'it cannot'}")


LEAK_HINT = ("draw ids, change only the tokens after position t, and compare the logits at positions <= t "
             "(torch.allclose): they must not move")
register_with_hidden("09_mystery_runs.future_leak", hint=LEAK_HINT)(FutureLeak)


# ------------------------------------------------------------------------------------------ training
SEQ_LEN = 32  # the broken script's sequence length
TARGET_VAL_LOSS = 1.45  # fixed: about 1.11 (lr 3e-3) to 1.22 (lr 1e-3) in 120 steps; lr 1e-5: 2.9, labels not
# shifted or no shuffle: above 5
VAL_ROWS = 256
# 120 steps are too few for a model trained without the causal mask to learn to cheat much (causal loss ~1.25),
# but it already does better when allowed to read the future (by 0.13-0.28 nats); causal training does worse
# (by 0.01-0.04). So the judge also scores the weights *without* the mask.
READS_THE_FUTURE = 0.05


def evaluation_model(causal: bool = True) -> GPT:
    corpus_vocab = markov_corpus(SEQ_LEN).tokenizer.vocab_size
    return GPT(dataclasses.replace(PRESETS["tiny"], vocab_size=corpus_vocab, causal=causal))


@torch.no_grad()
def validation_loss(model: GPT, seed: int) -> float:
    """Mean next-token loss on ``VAL_ROWS`` validation rows drawn from the seed (labels shifted by the loader)."""
    val = markov_corpus(SEQ_LEN).val
    rows = random.Random(seed).sample(range(len(val)), VAL_ROWS)
    batch = val[rows]
    model.eval()
    return float(model(batch["input_ids"], labels=batch["labels"])["loss"])


class FixedTraining:
    @staticmethod
    def prepare(seed, folder):
        return random.Random(seed).randrange(10_000)  # the learner's training seed (the judge's rows are other)

    @staticmethod
    def judge(seed, observation):
        path = artifact(observation["file"])
        model, unmasked = evaluation_model(), evaluation_model(causal=False)
        try:
            weights = torch.load(path, map_location="cpu", weights_only=True)
            model.load_state_dict(weights, strict=True)
            unmasked.load_state_dict(weights, strict=True)
        except Exception as err:  # noqa: BLE001 -- any unloadable file fails the check, with the reason
            raise CheckFailed(f"{observation['file']} is not the tiny GPT's state_dict "
                              f"({type(err).__name__}: {str(err).splitlines()[0][:150]})") from None
        loss = validation_loss(model, seed)
        if not (math.isfinite(loss) and loss <= TARGET_VAL_LOSS):
            raise CheckFailed(f"validation loss of your trained weights (causal model, shifted labels): {loss:.3f}; "
                              f"the target is <= {TARGET_VAL_LOSS} (the data's floor is about 0.89)")
        reading_ahead = validation_loss(unmasked, seed)
        if reading_ahead < loss - READS_THE_FUTURE:
            raise CheckFailed(f"your weights score {reading_ahead:.3f} when they may read the future and {loss:.3f} "
                              "when they may not: they were trained with the future in view (the attention mask)")


TRAIN_HINT = "four planted bugs: the labels, the attention mask, the order of the data, the learning rate"
register_with_hidden("09_mystery_runs.fixed_training", hint=TRAIN_HINT)(FixedTraining)
