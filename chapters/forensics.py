"""NaN forensics: catch the first non-finite step, save everything needed to replay it, and replay it.

A NaN at step 4,000 is a crime scene: by the time you look, every weight is NaN and the evidence is gone.
:class:`NanForensics` keeps a copy of the state *before* each step (weights, optimizer, RNG). When a step
produces a non-finite loss or gradient, it writes that copy plus the step's batches to
``RUN_DIR/nan_forensics.pt``. :func:`replay` re-runs exactly that step from the file, with a hook on every
module, and reports the first tensor that went non-finite: a layer's output in the forward pass, the loss
itself (0/0 from a batch with nothing to predict), or a gradient in the backward pass.

The cost: a copy of the weights and optimizer state every step, and one ``isfinite`` check that waits for
the GPU every step. That is why it is opt-in -- a debugging mode, not a default.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from chapters.core.callbacks import Callback
from chapters.core.model import GPT, IGNORE_INDEX, GPTConfig
from chapters.errors import ForensicsError

FORENSICS_FILE = "nan_forensics.pt"
FORENSICS_KEYS = {"model_config", "model", "rng_cpu", "step", "batches"}  # what replay needs from the file


class NanForensics(Callback):
    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / FORENSICS_FILE
        self.saved = False

    def on_run_start(self, trainer):
        self._remember(trainer)

    def on_step_end(self, trainer):
        if self.saved:
            return
        finite = torch.isfinite(trainer.last_loss) & torch.isfinite(trainer.grad_norm)
        if not finite.item():  # the per-step sync this mode pays for
            torch.save({**self.before, "step": trainer.step, "batches": [
                {k: v.cpu() for k, v in batch.items()} for batch in trainer.step_batches]}, self.path)
            self.saved = True
        else:
            self._remember(trainer)

    def _remember(self, trainer):
        """Copy the state the *next* step starts from (on the CPU: GPU memory is the scarce kind)."""
        to_cpu = lambda tree: {k: v.detach().cpu().clone() if torch.is_tensor(v) else v for k, v in tree.items()}
        self.before = {
            "model_config": dataclasses.asdict(trainer.model.config),
            "model": to_cpu(trainer.model.state_dict()),
            "lr": trainer.optimizer.param_groups[0]["lr"],
            "rng_cpu": torch.get_rng_state(),
        }


@dataclass
class ReplayReport:
    step: int
    first_nonfinite: str  # where the first non-finite value appeared
    detail: str  # what it means

    def __str__(self) -> str:
        return f"step {self.step}: first non-finite value in {self.first_nonfinite} -- {self.detail}"


def replay(run_dir: str | Path) -> ReplayReport:
    """Re-run the saved step and name the first non-finite tensor, in the order the step computes them."""
    path = Path(run_dir) / FORENSICS_FILE
    if not path.is_file():
        raise ForensicsError(f"{path} not found: run with NaN forensics on (e.g. clinic reproduce nan)")
    try:
        saved = torch.load(path, weights_only=True)
    except Exception as err:  # noqa: BLE001 -- any unpickling failure means the same thing to the user
        raise ForensicsError(f"{path} is not a readable forensics file ({type(err).__name__})") from None
    missing = sorted(FORENSICS_KEYS - set(saved)) if isinstance(saved, dict) else sorted(FORENSICS_KEYS)
    if missing:  # a checkpoint, a bare tensor... renamed to nan_forensics.pt
        raise ForensicsError(f"{path} is not a NaN forensics file (no {', '.join(missing)})")
    try:
        model = GPT(GPTConfig(**saved["model_config"]))
        model.load_state_dict(saved["model"])
        torch.set_rng_state(saved["rng_cpu"])
        batches = [(batch["input_ids"], batch["labels"]) for batch in saved["batches"]]
    except (TypeError, ValueError, KeyError, RuntimeError) as err:  # the right keys, the wrong contents
        first_line = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise ForensicsError(f"{path} is a damaged NaN forensics file ({first_line})") from None
    model.train()
    step = saved["step"]

    bad_weights = [name for name, p in model.named_parameters() if not torch.isfinite(p).all()]
    if bad_weights:
        return ReplayReport(step, f"weight {bad_weights[0]}", "the weights were already non-finite before this step")

    first_bad_output = []

    def watch(name):
        def hook(module, inputs, output):
            tensor = output["logits"] if isinstance(output, dict) else output
            if not first_bad_output and torch.is_tensor(tensor) and not torch.isfinite(tensor).all():
                peak = max(x.abs().max().item() for x in inputs if torch.is_tensor(x) and x.is_floating_point()) \
                    if any(torch.is_tensor(x) and x.is_floating_point() for x in inputs) else float("nan")
                first_bad_output.append((name, peak))
        return hook

    for name, module in model.named_modules():
        module.register_forward_hook(watch(name or "model"))
    for input_ids, labels in batches:
        out = model(input_ids, labels=labels)
        if first_bad_output:
            name, peak = first_bad_output[0]
            return ReplayReport(step, f"forward output of {name}",
                                f"its input's largest magnitude was {peak:.3g}: activations overflowed")
        if not torch.isfinite(out["loss"]):
            counted = int((labels != IGNORE_INDEX).sum())
            detail = ("every label in the batch is -100: the mean over 0 positions is 0/0" if counted == 0
                      else f"the loss over {counted} labelled positions is {out['loss'].item()}")
            return ReplayReport(step, "loss", detail)
        out["loss"].backward()
        bad_grads = [name for name, p in model.named_parameters()
                     if p.grad is not None and not torch.isfinite(p.grad).all()]
        if bad_grads:
            return ReplayReport(step, f"gradient of {bad_grads[-1]}",
                                "the forward pass was finite; the backward pass overflowed")
    norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None])
    return ReplayReport(step, "gradient norm", f"every gradient is finite but their total norm is {norm.item():.3g}"
                        if not math.isfinite(norm.item()) else "nothing non-finite: the step replays cleanly")
