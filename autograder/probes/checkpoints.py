"""Probes for ``08_checkpoints``: drive the learner's top-K checkpointer, load files with their safe loader."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

from autograder.probes import probe
from chapters.checkpoints.verify import CheckpointError
from chapters.core.model import GPT, GPTConfig


def metric_name(mode: str) -> str:
    return "val_loss" if mode == "min" else "val_accuracy"


def steps_on_disk(directory: Path) -> list[int]:
    """The step stored in every ``.pt`` file the checkpointer left (read from the contents, not the name)."""
    steps = []
    for path in sorted(directory.glob("*.pt")):
        try:
            steps.append(int(torch.load(path, map_location="cpu", weights_only=True)["step"]))
        except Exception as err:  # noqa: BLE001 -- any unreadable file is the learner's bug, reported as such
            steps.append(f"{path.name} unreadable ({type(err).__name__})")
    return sorted(steps, key=lambda item: (isinstance(item, str), str(item).zfill(12)))


@probe("08_checkpoints.topk")
@probe("08_checkpoints.topk_properties")
def topk(sequence: dict, checkpointer_class) -> dict:
    """Feed the scores one by one (a fresh object at ``restart_at``); the steps on disk after each."""
    directory = Path.cwd() / "checkpoints"
    directory.mkdir()
    name = metric_name(sequence["mode"])
    observed = []
    try:
        checkpointer = checkpointer_class(str(directory), k=sequence["k"], metric_name=name, mode=sequence["mode"])
        for step, value in enumerate(sequence["scores"], 1):
            if step == sequence["restart_at"]:  # the run is killed and resumed: a fresh object, same directory
                checkpointer = checkpointer_class(str(directory), k=sequence["k"], metric_name=name,
                                                  mode=sequence["mode"])
            state = {"step": step, "weights": torch.full((3,), float(step))}
            checkpointer.maybe_save(state, {"step": step, name: value})
            observed.append(steps_on_disk(directory))
    except NotImplementedError:
        raise
    except Exception as err:  # noqa: BLE001 -- a crash is a verdict, reported with what was seen so far
        return {"kept": observed, "error": f"{type(err).__name__}: {err}"[:300]}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return {"kept": observed, "error": None}


def probe_ids(config: GPTConfig) -> torch.Tensor:
    return torch.arange(min(12, config.block_size)).remainder(config.vocab_size).unsqueeze(0)


@torch.no_grad()
def fingerprint(model: GPT, config: GPTConfig) -> float:
    model.eval()
    return float(model(probe_ids(config))["logits"].double().sum())


@probe("08_checkpoints.safe_load")
def safe_load(case: dict, safe_load) -> list[dict]:
    """Load each prepared file ``case-<i>.pt`` into a fresh model; what happened, and what the model holds."""
    config = GPTConfig(**case["config"])
    results = []
    for index in range(case["files"]):
        torch.manual_seed(999)
        model = GPT(config)
        marker = Path(f"code-ran-{index}")  # made by the pickle that runs code, if it is ever unpickled
        outcome = {"code_ran": False}
        try:
            logits = safe_load(model, str(Path.cwd() / f"case-{index}.pt"))
            outcome["result"] = "loaded"
            outcome["logits_ok"] = bool(isinstance(logits, torch.Tensor)
                                        and tuple(logits.shape[-1:]) == (config.vocab_size,)
                                        and torch.isfinite(logits).all())
            outcome["fingerprint"] = fingerprint(model, config)
        except NotImplementedError:
            raise
        except CheckpointError as err:
            outcome["result"] = "refused"
            outcome["message"] = str(err)[:200]
        except Exception as err:  # noqa: BLE001 -- the wrong kind of failure, reported
            outcome["result"] = f"raised {type(err).__name__}: {str(err)[:150]}"
        if marker.exists():
            outcome["code_ran"] = True
            marker.rmdir()
        results.append(outcome)
    return results
