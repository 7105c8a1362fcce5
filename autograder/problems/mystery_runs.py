"""Checks for ``09_mystery_runs``: diagnose unlabelled logs, then fix a broken training script.

Diagnosis: the logs come from :mod:`chapters.mystery_runs` (the doctor's benchmark MLP, one fault each,
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
import re

import torch

from autograder.checks import CheckFailed, artifact, register_with_hidden
from chapters.core.data import markov_corpus
from chapters.core.model import GPT, PRESETS
from chapters.labelled_runs import onset
from chapters.doctor.findings import LABELS
from chapters.mystery_runs import MYSTERY_FAULTS, draw_cases, write_mystery_logs

LATE = 20  # steps after the onset a log may first show it (records every 5 steps, NaN a few steps later)
EARLY = 5  # steps before the onset: the record of the step where it starts
FROM_THE_START = 50  # faults present from step 1 show in the first records


def evidence_window(case) -> tuple[int, int]:
    start = onset(case)
    return (0, FROM_THE_START) if start == 0 else (start - EARLY, start + LATE)


# What a fix for each fault must act on: one of these words (any case) must be in the answer's fix, and none of
# the ``FIX_CONTRADICTIONS`` (a fix pointing the wrong way). A fix text is judged against the fault, as 03_nan
# does with FIXES: "clip gradients" is no answer to a frozen layer, "lower the learning rate" none to an OOM.
FIX_WORDS = {
    "nan_loss": ("batch", "label", "data", "skip", "guard", "filter", "drop", "isfinite", "non-finite", "nonfinite"),
    "divergence": ("learning rate", "learning-rate", "lr", "schedule", "warmup"),
    "grad_explosion": ("clip", "normalis", "normaliz", "standardis", "standardiz", "scale", "input"),
    "oom": ("batch", "accumulat", "checkpoint", "memory", "precision", "bf16", "fp16"),
    "frozen_parameters": ("unfreeze", "requires_grad", "trainable", "frozen", "freeze"),
    "loss_plateau": ("learning rate", "learning-rate", "lr"),
}
FIX_CONTRADICTIONS = {"loss_plateau": ("lower", "reduce", "decrease", "smaller"),
                      "divergence": ("raise", "increase", "higher", "larger")}
FIX_TOPICS = {"nan_loss": "the batch or data that produced the non-finite loss",
              "divergence": "the learning rate or its schedule",
              "grad_explosion": "the size of the inputs or gradients (clipping, normalisation)",
              "oom": "the memory a step needs (batch size, accumulation, checkpointing, precision)",
              "frozen_parameters": "the parameters that do not train",
              "loss_plateau": "a learning rate too small to move the weights"}


# The second hint, after a wrong label: what the label the learner chose would look like in a log.
LOOKS_LIKE = {"nan_loss": "a train_loss that is NaN or inf", "divergence": "a finite loss climbing away after a "
              "change in lr", "grad_explosion": "grad_norm orders of magnitude above its usual level, lr unchanged",
              "oom": "an oom event", "frozen_parameters": "a per-group grad_norm that is 0 from the first record",
              "loss_plateau": "a loss that barely moves from the start"}


def fix_fits(fault: str, fix: str) -> bool:
    """True when ``fix`` names something that acts on ``fault`` and does not point the other way."""
    words = set(re.findall(r"[a-z0-9_\-]+", fix.lower()))
    text = " ".join(sorted(words)) + " " + fix.lower()

    def mentions(term: str) -> bool:  # short terms ("lr") must be whole words, longer ones may be stems
        return term in words if len(term) <= 3 else term in text

    return any(mentions(term) for term in FIX_WORDS[fault]) and not any(
        mentions(term) for term in FIX_CONTRADICTIONS.get(fault, ()))


def logs_per_check(seed: int) -> int:
    """Public: three logs. Hidden: one of every fault, so a rule that is wrong for any one of them loses points."""
    return 3 if seed == 0 else len(MYSTERY_FAULTS)


class Diagnose:
    @staticmethod
    def prepare(seed, folder):
        return [str(path.relative_to(folder))
                for path in write_mystery_logs(seed, folder / "logs", logs_per_check(seed))]

    @staticmethod
    def judge(seed, observation):
        cases = draw_cases(seed, logs_per_check(seed))
        if len(observation) != len(cases):
            raise CheckFailed(f"expected one answer per log ({len(cases)}), got {len(observation)}")
        for number, (case, answer) in enumerate(zip(cases, observation), 1):
            if answer["anomaly"] not in LABELS:
                raise CheckFailed(f"run-{number}: {answer['anomaly']!r} is not a doctor label "
                                  f"({', '.join(LABELS)})")
            if answer["anomaly"] != case.fault:
                raise CheckFailed(f"run-{number}: you said {answer['anomaly']}, which would show as "
                                  f"{LOOKS_LIKE.get(answer['anomaly'], 'something else')}: is that in this log, and "
                                  "is it the first thing that went wrong?")
            low, high = evidence_window(case)
            if not low <= answer["step"] <= high:
                raise CheckFailed(f"run-{number} ({case.fault}): step {answer['step']} is not where the log first "
                                  f"shows it (between steps {low} and {high})")
            if len(answer["fix"].split()) < 2:
                raise CheckFailed(f"run-{number}: say in a few words what to change (fix: {answer['fix']!r})")
            if not fix_fits(case.fault, answer["fix"]):
                raise CheckFailed(f"run-{number} ({case.fault}): the fix {answer['fix']!r} does not act on what went "
                                  f"wrong here ({FIX_TOPICS[case.fault]})")


DIAGNOSE_HINT = ("plot each log's loss, grad_norm and lr and read its events; Problem 1 describes what each "
                 "fault leaves in the records. Some faults hide others: think about the order of your rules")
register_with_hidden("09_mystery_runs.diagnose", hint=DIAGNOSE_HINT)(Diagnose)


# ---------------------------------------------------------------------------------- causality probe
LEAKS = {"causal": False, "no_mask": True, "sees_next_token": True}


@functools.lru_cache(maxsize=8)  # the oracle asks for them once per question
def probe_models(seed: int) -> list[tuple[str, GPT]]:
    """Small random GPTs, some of which can see the future: no mask, or fed the next token as well."""
    rng = random.Random(seed)
    # Hidden: every kind at least once (a probe that calls everything a leak, or nothing, fails), plus two more.
    kinds = ["causal", "no_mask", "sees_next_token", "causal"] if seed == 0 else \
        rng.sample([*LEAKS, *(rng.choice(list(LEAKS)) for _ in range(2))], 5)
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


LEAK_HINT = "what may the logits at a position depend on? design an experiment that would show a violation"
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


TRAIN_HINT = ("read the script line by line against what the course taught; evaluate() scores your weights the "
              "way the grader does")
register_with_hidden("09_mystery_runs.fixed_training", hint=TRAIN_HINT)(FixedTraining)
