"""Checks for ``06_overfitting``'s first two sections: the loss at init, and overfitting one batch on purpose.

Both are judged on small course GPTs the grader builds from the seed. The judge rebuilds the same models and
batches, measures them with the protocol the notebook states (eval mode, AdamW at ``LR``, at most ``MAX_STEPS``
steps, memorised below ``TARGET`` of the first loss) and compares the learner's numbers and verdicts.

Hidden variants: other vocabulary sizes (8 to 600), padded batches (ignored labels), dropout that a
measurement in train mode picks up, inits scaled to land on either side of the 10 % band whatever the
vocabulary (so an absolute threshold fails), labels that leak the inputs; for one batch, a model with
heavy dropout (memorises only with dropout off), frozen parameters (a bug: nothing learns) and a model
too narrow to hold the batch (it learns, then stalls).
"""

from __future__ import annotations

import functools
import math
import random

import torch

from autograder.checks import CheckFailed, register_with_hidden
from autograder.probes.sanity import INIT_VERDICTS, OVERFIT_VERDICTS, one_thread
from chapters.core.model import GPT, GPTConfig, IGNORE_INDEX

TOLERANCE = 0.10  # the init loss is "ok" within 10 % of ln(V), either side
LR, MAX_STEPS, TARGET = 1e-2, 100, 0.10  # the overfit-one-batch protocol the notebook states
NOT_LEARNING = 0.90  # a final loss above 90 % of the first: nothing learns (a bug, not the model's size)
LAST_LOSS_TOLERANCE = 0.02  # the same loop on one thread gives the same bits; 2 % is room for a harmless reordering
PAD = 0


# ---------------------------------------------------------------------------------------- the batches
def padded_batch(rng: random.Random, vocab_size: int, rows: int, length: int, leak: bool = False,
                 padded: bool = True) -> dict:
    """Random tokens (0 is the pad), each row padded at its end over up to half its length (labels ignored there).

    ``leak``: the labels are the inputs themselves instead of the next tokens -- the model sees its answer.
    """
    generator = torch.Generator().manual_seed(rng.randrange(2**31))
    tokens = torch.randint(1, vocab_size, (rows, length + 1), generator=generator)
    input_ids, labels = tokens[:, :-1].clone(), tokens[:, 1:].clone()
    if leak:
        labels = input_ids.clone()
    for row in range(rows if padded else 0):
        kept = rng.randint(length // 2, length)
        input_ids[row, kept:], labels[row, kept:] = PAD, IGNORE_INDEX
    return {"input_ids": input_ids, "labels": labels}


def small_gpt(vocab_size: int, seed: int, **changes) -> GPT:
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=vocab_size, block_size=32, **{"n_layer": 1, "n_head": 2, "n_embd": 32, **changes}))


@torch.no_grad()
def eval_loss(model: GPT, batch: dict) -> float:
    """The reference measurement: eval mode (dropout off), the model's own loss (ignored labels left out)."""
    was_training = model.training
    model.eval()
    loss = model(batch["input_ids"], labels=batch["labels"])["loss"].item()
    model.train(was_training)
    return loss


# ------------------------------------------------------------------------------------ 1. loss at init
def scale_init(model: GPT, batch: dict, target_ratio: float) -> GPT:
    """Scale the token embedding (tied to the head) until the loss is ``target_ratio`` x ln(V).

    A scale above 1 is the classic "forgot the small init" bug (``nn.Embedding``'s default is std 1, not
    0.02): confident logits. Whether the loss goes up or down with it depends on the labels: random next tokens
    make the loss rise, labels that are the inputs make it fall. Bisection on the log of the scale (0.01 to 500),
    which ends with the weights at the scale found."""
    expected = math.log(model.config.vocab_size)
    original = model.token_embedding.weight.detach().clone()

    def ratio_at(log_scale: float) -> float:
        with torch.no_grad():
            model.token_embedding.weight.copy_(original * math.exp(log_scale))
        return eval_loss(model, batch) / expected

    low, high = math.log(0.01), math.log(500.0)
    rises = ratio_at(high) > ratio_at(low)
    for _ in range(40):
        middle = (low + high) / 2
        if (ratio_at(middle) < target_ratio) == rises:
            low = middle
        else:
            high = middle
    return model


@functools.lru_cache(maxsize=8)
def init_cases(seed: int) -> tuple[tuple[GPT, dict], ...]:
    """Public: a healthy init and one at 1.5 x ln(V), V = 33, no padding, no dropout. Hidden: five, shuffled --
    a healthy init (dropout, padding, any V); scaled inits at 1.12-1.14 x ln(V) with V <= 12 (too high) and at
    1.06-1.08 x ln(V) with V >= 400 (ok, though more nats above than the first); labels that leak, at 0.86-0.88
    x ln(V) with V <= 12 (too low) and at 0.92-0.94 x ln(V) with V >= 400 (ok: a leak the band cannot see)."""
    rng = random.Random(seed)
    if seed == 0:
        batch = padded_batch(rng, 33, 4, 16, padded=False)
        return ((small_gpt(33, 1), batch), (scale_init(small_gpt(33, 2), batch, 1.5), batch))
    cases = []
    # Every absolute band fails one of the four scaled cases. High side: 1.12-1.14 x ln(8..12) is at most 0.348
    # nats above (too high, by 10 %), 1.06-1.08 x ln(400..600) at least 0.36 above (ok). Low side, with labels
    # that leak: 0.86-0.88 x ln(8..12) at most 0.348 below (too low), 0.92-0.94 x ln(400..600) 0.36 below (ok).
    plans = [(rng.randint(8, 600), None, False),  # (vocabulary, loss / ln(V) to scale to, labels = inputs)
             (rng.randint(8, 12), rng.uniform(1.12, 1.14), False),
             (rng.randint(400, 600), rng.uniform(1.06, 1.08), False),
             (rng.randint(8, 12), rng.uniform(0.86, 0.88), True),
             (rng.randint(400, 600), rng.uniform(0.92, 0.94), True)]
    for vocab_size, ratio, leak in plans:
        dropout = rng.choice([0.1, 0.2, 0.3])
        batch = padded_batch(rng, vocab_size, rng.randint(3, 6), rng.randint(12, 24), leak=leak)
        model = small_gpt(vocab_size, rng.randrange(2**31), dropout=dropout)
        cases.append((model if ratio is None else scale_init(model, batch, ratio), batch))
    rng.shuffle(cases)
    return tuple(cases)


def init_verdict(loss: float, expected: float) -> str:
    if loss > expected * (1 + TOLERANCE):
        return "too_high"
    if loss < expected * (1 - TOLERANCE):
        return "too_low"
    return "ok"


class InitLoss:
    @staticmethod
    def prepare(seed, folder):
        return [{"model": model, "batch": batch} for model, batch in init_cases(seed)]

    @staticmethod
    def judge(seed, observations):
        cases = init_cases(seed)
        if len(observations) != len(cases):
            raise CheckFailed(f"expected {len(cases)} answers, got {len(observations)}")
        for number, ((model, batch), got) in enumerate(zip(cases, observations), 1):
            vocab_size = model.config.vocab_size
            expected, measured = math.log(vocab_size), eval_loss(model, batch)
            counted = int((batch["labels"] != IGNORE_INDEX).sum())
            where = f"model {number} (vocabulary {vocab_size}, {counted} of {batch['labels'].numel()} labels counted)"
            if not math.isclose(float(got["expected"]), expected, rel_tol=1e-4):
                raise CheckFailed(f"{where}: expected {float(got['expected']):.4f}, but an untrained model that gives "
                                  "every token the same chance has a different loss (what is that chance?)")
            if not math.isclose(float(got["measured"]), measured, rel_tol=1e-4):
                raise CheckFailed(f"{where}: measured {float(got['measured']):.4f}, the model's loss on this batch is "
                                  f"{measured:.4f} (which positions count, and is dropout on while you measure?)")
            if got["verdict"] not in INIT_VERDICTS:
                raise CheckFailed(f"{where}: verdict must be one of {', '.join(INIT_VERDICTS)}, got {got['verdict']!r}")
            right = init_verdict(measured, expected)
            if got["verdict"] != right:
                raise CheckFailed(f"{where}: {measured:.3f} is {measured / expected:.3f} x the expected "
                                  f"{expected:.3f}; you said {got['verdict']!r} (the band is relative to the expected "
                                  "loss)")


HINT_INIT = ("section 1 says what an untrained model predicts and which labels the loss counts; measure the way "
             "the first training step would, minus anything random")
register_with_hidden("06_overfitting.init_loss", hint=HINT_INIT)(InitLoss)


# -------------------------------------------------------------------------------- 2. overfit one batch
def memorise(model: GPT, batch: dict) -> dict:
    """The reference protocol: dropout off, AdamW on the trainable parameters, stop below TARGET x the first."""
    model.eval()  # dropout off: memorising is the one time regularisation is unwelcome
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=LR)
    first = None
    for step in range(MAX_STEPS + 1):
        loss = model(batch["input_ids"], labels=batch["labels"])["loss"]
        first = loss.item() if first is None else first
        if loss.item() < TARGET * first or step == MAX_STEPS:
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    last = loss.item()
    if last < TARGET * first:
        verdict = "memorised"
    elif last > NOT_LEARNING * first:
        verdict = "not_learning"
    else:
        verdict = "too_little_capacity"
    return {"first_loss": first, "last_loss": last, "steps": step, "verdict": verdict}


def frozen(model: GPT, rng: random.Random) -> GPT:
    """Everything but one LayerNorm frozen: the bug of a fine-tuning script that froze too much."""
    keep = rng.choice(["norm_final", "blocks.0.norm"])
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(name.startswith(keep))
    return model


def overfit_cases(seed: int) -> list[tuple[GPT, dict]]:
    """Public: a healthy model and a frozen one. Hidden: four, shuffled -- healthy with light dropout, healthy
    with dropout 0.5, frozen, and a model 6 wide with one head (too little capacity for its batch)."""
    rng = random.Random(seed)
    kinds = ["healthy", "frozen"] if seed == 0 else rng.sample(["healthy", "heavy_dropout", "frozen", "narrow"], 4)
    cases = []
    for kind in kinds:
        # hidden: vocabularies well away from the public 33, so a target copied from its first loss is wrong
        vocab_size = 33 if seed == 0 else rng.choice([rng.randint(8, 16), rng.randint(64, 128)])
        batch = padded_batch(rng, vocab_size, 16, 32)
        model_seed = rng.randrange(2**31)
        if kind == "narrow":
            model = small_gpt(vocab_size, model_seed, n_embd=6, n_head=1)
        else:
            dropout = 0.5 if kind == "heavy_dropout" else (0.0 if seed == 0 else 0.1)
            model = small_gpt(vocab_size, model_seed, dropout=dropout)
        cases.append((frozen(model, rng) if kind == "frozen" else model, batch))
    return cases


class OverfitOneBatch:
    @staticmethod
    def prepare(seed, folder):
        return [{"model": model, "batch": batch} for model, batch in overfit_cases(seed)]

    @staticmethod
    def judge(seed, observations):
        cases = overfit_cases(seed)
        if len(observations) != len(cases):
            raise CheckFailed(f"expected {len(cases)} answers, got {len(observations)}")
        for number, ((model, batch), got) in enumerate(zip(cases, observations), 1):
            where = (f"model {number} (vocabulary {model.config.vocab_size}, width {model.config.n_embd}, dropout "
                     f"{model.config.dropout})")
            with one_thread():  # as the probe ran the learner's loop
                expected = memorise(model, batch)
            if not math.isclose(float(got["first_loss"]), expected["first_loss"], rel_tol=1e-4):
                raise CheckFailed(f"{where}: first loss {float(got['first_loss']):.4f}, the protocol's is "
                                  f"{expected['first_loss']:.4f} (measured with dropout on?)")
            if not math.isclose(float(got["last_loss"]), expected["last_loss"], rel_tol=LAST_LOSS_TOLERANCE):
                raise CheckFailed(f"{where}: last loss {float(got['last_loss']):.4f}, the protocol ends at "
                                  f"{expected['last_loss']:.4f} after {expected['steps']} steps (when does it stop?)")
            if got["verdict"] not in OVERFIT_VERDICTS:
                raise CheckFailed(f"{where}: verdict must be one of {', '.join(OVERFIT_VERDICTS)}, "
                                  f"got {got['verdict']!r}")
            if got["verdict"] != expected["verdict"]:
                raise CheckFailed(f"{where}: you said {got['verdict']!r} with a last loss of "
                                  f"{float(got['last_loss']):.3f} from {float(got['first_loss']):.3f}; the "
                                  f"protocol reaches {expected['last_loss']:.3f} in {expected['steps']} steps. Which "
                                  "part of the protocol does your loop differ in?")


HINT_OVERFIT = ("follow the protocol of section 2 exactly (mode, optimizer, what it trains, how long, when to "
                "stop); then read the three verdicts off the first and the last loss")
register_with_hidden("06_overfitting.overfit_one_batch", hint=HINT_OVERFIT)(OverfitOneBatch)
