"""Checks for ``08_checkpoints``: the course text's top-K checkpointer and safe loader, fixed.

Property-style checks. Score sequences are drawn from the seed -- ties, NaN scores, both modes, a restart half
way -- and the files the learner's checkpointer leaves on disk after every call are compared with the K best
steps as the course's :class:`~chapters.checkpoints.keeper.TopKKeeper` ranks them. Checkpoint files for the
loader are good, truncated, garbage, from another model, with NaN weights, or a pickle that runs code; the
judge rebuilds the good ones to know which logits loading them must give.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import torch

from autograder.checks import CheckFailed, register_with_hidden
from autograder.probes.checkpoints import fingerprint, metric_name
from chapters.checkpoints.keeper import TopKKeeper
from chapters.core.model import GPT, GPTConfig

# ------------------------------------------------------------------------------------------ top-K
PUBLIC_SEQUENCES = {
    # The course text's failure: K=2, a loss that improves every time.
    "basic": {"k": 2, "mode": "min", "scores": [5.0, 4.0, 3.0, 2.0, 1.0, 1.5, 0.5], "restart_at": None},
    # Accuracy (higher is better), a tie, a NaN, and a restart after the fourth score.
    "full": {"k": 3, "mode": "max", "scores": [0.2, 0.5, 0.5, float("nan"), 0.4, 0.7, 0.5, 0.9, 0.1],
             "restart_at": 4},
}


def score_sequence(seed: int, kind: str) -> dict:
    if seed == 0:
        return PUBLIC_SEQUENCES[kind]
    rng = random.Random(seed)
    while True:  # a draw without enough finite scores for the planted tie is drawn again (same seed, same result)
        sequence = _draw_sequence(rng, full=kind == "full")
        if sequence is not None:
            return sequence


def _draw_sequence(rng: random.Random, full: bool) -> dict | None:
    scores = []
    for _ in range(rng.randint(8, 14)):
        if full and rng.random() < 0.15:
            scores.append(float("nan"))
        else:
            scores.append(round(rng.uniform(0.0, 3.0), 1 if rng.random() < 0.5 else 3))  # ties when rounded
    k, mode = rng.randint(1, 4), rng.choice(["min", "max"]) if full else "min"
    if not full:
        return {"k": k, "mode": mode, "scores": scores, "restart_at": None}
    # Every property, every time: a NaN while fewer than K are kept, a tie at the K-th place, and a restart
    # followed by a score worse than the K kept (a checkpointer that forgot its ranking saves it).
    scores[rng.randrange(k)] = float("nan")
    restart_at = rng.randint(k + 2, len(scores) - 1)
    after_restart = restart_at - 1  # the index of the first score the new object sees
    earlier = [v for v in scores[:after_restart] if not math.isnan(v)]
    if not earlier:
        return None
    scores[after_restart] = max(earlier) + 0.5 if mode == "min" else min(earlier) - 0.5

    def finite_before(index: int) -> list[float]:
        return [v for v in scores[:index] if not math.isnan(v)]

    # The tie needs a K-th best to copy: only places with at least K finite scores before them will do.
    places = [i for i in range(k + 2, len(scores)) if i != after_restart and len(finite_before(i)) >= k]
    if not places:
        return None
    position = rng.choice(places)
    ranked = sorted(finite_before(position), reverse=mode == "max")
    scores[position] = ranked[k - 1]
    return {"k": k, "mode": mode, "scores": scores, "restart_at": restart_at}


def reference_kept(sequence: dict) -> list[list[int]]:
    """After each score, the steps of the K best so far (ties to the older, NaN never), as TopKKeeper ranks."""
    keeper = TopKKeeper(sequence["k"], metric_name(sequence["mode"]), sequence["mode"])
    kept = []
    for step, value in enumerate(sequence["scores"], 1):
        keeper.add(step, "", 0)
        keeper.rank(step, value)
        kept.append(sorted(entry.step for entry in keeper.best()[: sequence["k"]]))
    return kept


class TopK:
    def __init__(self, kind: str):
        self.kind = kind

    def prepare(self, seed, folder):
        return score_sequence(seed, self.kind)

    def judge(self, seed, observation):
        sequence = score_sequence(seed, self.kind)
        expected = reference_kept(sequence)
        setting = (f"k={sequence['k']}, mode={sequence['mode']!r}, scores "
                   f"{[round(s, 3) for s in sequence['scores']]}"
                   + (f", restarted before step {sequence['restart_at']}" if sequence["restart_at"] else ""))
        kept = observation["kept"]
        if observation["error"] is not None:
            raise CheckFailed(f"{setting}: maybe_save raised {observation['error']} at step {len(kept) + 1}")
        for step, (got, want) in enumerate(zip(kept, expected), 1):
            if got != want:
                raise CheckFailed(f"{setting}: after step {step} the checkpoints on disk hold steps {got}, the "
                                  f"{sequence['k']} best so far are steps {want}")
        if len(kept) != len(expected):
            raise CheckFailed(f"{setting}: observed {len(kept)} saves, expected {len(expected)}")


TOPK_HINT = ("trace the course text's checkpointer by hand for a few saves: which file does it write, which does "
             "it delete, and what does a restarted run know?")
register_with_hidden("08_checkpoints.topk", hint=TOPK_HINT)(TopK("basic"))
PROPERTY_HINT = "the edge cases in the notebook's rules: equal scores, scores that are not numbers, the other mode"
register_with_hidden("08_checkpoints.topk_properties", hint=PROPERTY_HINT)(TopK("full"))


# ------------------------------------------------------------------------------------------ loading
class RunsCode:
    """A pickle that calls ``os.mkdir(name)`` when unpickled: what a malicious checkpoint does (harmlessly)."""

    def __init__(self, name: str):
        self.name = name

    def __reduce__(self):
        return (os.mkdir, (self.name,))


BAD_KINDS = ("truncated", "garbage", "extra_layer", "missing_keys", "wrong_width", "nan_weights", "runs_code",
             "no_model_key")
PUBLIC_CASES = ["good", "truncated", "extra_layer", "runs_code", "good"]


def loader_setting(seed: int) -> tuple[GPTConfig, list[str]]:
    rng = random.Random(seed)
    if seed == 0:
        return GPTConfig(vocab_size=33, block_size=32, n_layer=2, n_head=2, n_embd=16), PUBLIC_CASES
    config = GPTConfig(vocab_size=rng.choice([20, 33, 65, 97]), block_size=rng.choice([16, 32]),
                       n_layer=rng.randint(1, 2), n_head=2, n_embd=rng.choice([8, 16, 24]))
    cases = ["good", "good", *BAD_KINDS]  # every kind of bad file, every time, in an order drawn from the seed
    rng.shuffle(cases)
    return config, cases


def seeded_state(config: GPTConfig, seed: int) -> dict:
    torch.manual_seed(seed)
    return GPT(config).state_dict()


def case_bytes(config: GPTConfig, kind: str, seed: int, index: int, directory: Path) -> bytes:
    """The file of case ``index``; written to ``directory`` first, read back as bytes."""
    rng = random.Random(seed * 1000 + index)
    path = directory / f"case-{index}.pt"
    good = seeded_state(config, seed * 1000 + index)
    if kind in ("good", "truncated"):
        torch.save({"model": good}, path)
        if kind == "truncated":
            data = path.read_bytes()
            path.write_bytes(data[: int(len(data) * rng.uniform(0.2, 0.9))])
    elif kind == "garbage":
        path.write_bytes(rng.randbytes(rng.randint(10, 4000)))
    elif kind == "extra_layer":
        torch.save({"model": seeded_state(GPTConfig(**{**vars(config), "n_layer": config.n_layer + 1}), 1)}, path)
    elif kind == "missing_keys":
        dropped = rng.sample(sorted(good), 2)
        torch.save({"model": {k: v for k, v in good.items() if k not in dropped}}, path)
    elif kind == "wrong_width":
        torch.save({"model": seeded_state(GPTConfig(**{**vars(config), "n_embd": config.n_embd + 8}), 1)}, path)
    elif kind == "nan_weights":
        good["norm_final.weight"][rng.randrange(config.n_embd)] = float("nan")
        torch.save({"model": good}, path)
    elif kind == "runs_code":
        torch.save({"model": RunsCode(f"code-ran-{index}")}, path)
    elif kind == "no_model_key":
        torch.save({"weights": good}, path)
    return path.read_bytes()


class SafeLoad:
    @staticmethod
    def prepare(seed, folder):
        config, cases = loader_setting(seed)
        for index, kind in enumerate(cases):
            case_bytes(config, kind, seed, index, folder)
        return {"config": vars(config), "files": len(cases)}

    @staticmethod
    def judge(seed, observation):
        import tempfile

        config, cases = loader_setting(seed)
        if len(observation) != len(cases):
            raise CheckFailed(f"expected {len(cases)} results, got {len(observation)}")
        with tempfile.TemporaryDirectory() as scratch:
            for index, (kind, got) in enumerate(zip(cases, observation)):
                what = f"case {index} ({kind.replace('_', ' ')} checkpoint, vocab {config.vocab_size})"
                if got["code_ran"]:
                    raise CheckFailed(f"{what}: loading it ran code hidden in the file -- unpickle with "
                                      "weights_only=True")
                if kind != "good":
                    if got["result"] != "refused":
                        raise CheckFailed(f"{what}: expected CheckpointError, got: {got['result']}")
                    continue
                if got["result"] != "loaded":
                    raise CheckFailed(f"{what}: a good checkpoint must load, got: {got['result']}"
                                      f"{' ' + got.get('message', '') if got['result'] == 'refused' else ''}")
                if not got["logits_ok"]:
                    raise CheckFailed(f"{what}: safe_load must return the probe's finite logits "
                                      f"[..., {config.vocab_size}]")
                case_bytes(config, kind, seed, index, Path(scratch))
                model = GPT(config)
                model.load_state_dict(torch.load(Path(scratch) / f"case-{index}.pt", weights_only=True)["model"])
                want = fingerprint(model, config)
                if not math.isclose(got["fingerprint"], want, rel_tol=1e-5, abs_tol=1e-4):
                    raise CheckFailed(f"{what}: after safe_load the model does not hold the checkpoint's weights")


LOAD_HINT = ("what can a file from elsewhere do while it is unpickled, what if it does not match the model, and "
             "how do you know the loaded model works?")
register_with_hidden("08_checkpoints.safe_load", hint=LOAD_HINT)(SafeLoad)
