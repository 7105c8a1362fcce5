"""Level 2, continued -- histograms: what is inside each layer, not only its norm.

A gradient norm is one number per group; a **histogram** is the whole distribution, step after step
(TensorBoard's *Histograms* and *Distributions* tabs). Two kinds are written here, per layer:

* ``activations/<module>``: the output of every activation module (the GPT's ``blocks.N.mlp.act``, a GELU);
* ``gradients/<layer>``: every gradient of that layer's parameters (``blocks.N``, ``token_embedding``...),
  before clipping.

**Reading them.** A healthy GELU/ReLU layer shows a tall spike at 0 (the units a token switches off) *and*
a spread of positive values that moves slowly during training. A **dead** layer is the spike alone: its
units output ~0 for every input, so no gradient flows back through them and (for ReLU) they never come
back -- a too-large learning rate or a large negative bias does this. A ``tanh``/``sigmoid`` layer is
**saturated** when its values pile up against the bounds (+-1, or 0 and 1), where the derivative is ~0.
A healthy gradient histogram is centred on 0 with a width that changes slowly; one collapsed onto 0 is a
layer that does not learn, one widening by orders of magnitude is an explosion on its way.

**The numbers to act on** go in the metric record on those steps, so they reach ``metrics.jsonl`` and
TensorBoard under the same name: ``dead_units/<module>``, the fraction of units whose output stays below
:data:`DEAD_THRESHOLD` in magnitude for every token of the batch (ReLU-like layers), and
``saturated/<module>``, the fraction of values within :data:`SATURATION_MARGIN` of the bounds
(tanh/sigmoid). A dead fraction that grows from ~0 is worth stopping for.

**Cost.** A histogram copies every value to the host and bins it -- a GPU sync and real work. So it is
written every :data:`HISTOGRAM_EVERY` steps only, and on every other step nothing happens at all: the
forward hooks are attached just before a histogram step and removed as soon as its forward pass is over.
The step drawn is a logging step, where its numbers can be written: with ``log_every=10`` steps 100, 200...;
with ``log_every=30``, the logging step after each multiple of 100 (120, 210, 300...). With several
micro-batches per step the first one is kept.
"""

from __future__ import annotations

import torch
from torch import nn

from chapters.core.callbacks import Callback
from chapters.logging_levels.level2_tensorboard import TensorBoardLogger

HISTOGRAM_EVERY = 100  # steps between histograms: 6 in the tiny preset's 600 steps
DEAD_THRESHOLD = 1e-3  # |GELU(x)| < 1e-3 for x below about -3.4: such a unit passes (almost) nothing
SATURATION_MARGIN = 0.03  # within 3 % of the range from a bound: tanh beyond +-0.94, derivative below 0.12
RECTIFIERS = (nn.ReLU, nn.GELU, nn.SiLU)  # output ~0 for negative inputs: can die
SQUASHERS = {nn.Tanh: (-1.0, 1.0), nn.Sigmoid: (0.0, 1.0)}  # bounded outputs: can saturate


def dead_fraction(activations: torch.Tensor) -> float:
    """Fraction of units (the last dimension) whose output is ~0 for every position of the batch."""
    largest = activations.detach().abs().flatten(0, -2).amax(dim=0)  # one value per unit
    return (largest < DEAD_THRESHOLD).float().mean().item()


def saturated_fraction(activations: torch.Tensor, low: float, high: float) -> float:
    """Fraction of values within ``SATURATION_MARGIN`` of the range ``[low, high]``'s bounds."""
    margin = SATURATION_MARGIN * (high - low)
    values = activations.detach()
    return ((values <= low + margin) | (values >= high - margin)).float().mean().item()


def layer_of(parameter_name: str) -> str:
    """The layer a parameter belongs to: ``blocks.0.mlp.up.weight`` -> ``blocks.0``, ``head.weight`` -> ``head``."""
    parts = parameter_name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 and parts[1].isdigit() else parts[0]


def finite_values(tensor: torch.Tensor) -> torch.Tensor:
    """The finite values as float32 on the host (a NaN has no bin; the ``nan`` event reports it)."""
    values = tensor.detach().float().flatten().cpu()
    return values[torch.isfinite(values)]


class LayerHistograms(Callback):
    """Every ``every`` steps: activation and gradient histograms into the TensorBoard logger's event file,
    and ``dead_units/<module>`` / ``saturated/<module>`` into that step's metric record."""

    def __init__(self, tensorboard: TensorBoardLogger, every: int = HISTOGRAM_EVERY):
        if every < 1:
            raise ValueError(f"histograms every {every} steps: give a positive number of steps")
        self.tensorboard = tensorboard  # its writer exists once the run starts
        self.every = every
        self.hooks = []
        self.captured: dict[str, tuple[nn.Module, torch.Tensor]] = {}
        self.numbers: dict[str, float] = {}

    def on_run_start(self, trainer):
        self.attach_before_histogram_step(trainer)

    def on_step_complete(self, trainer):
        self.attach_before_histogram_step(trainer)

    def attach_before_histogram_step(self, trainer) -> None:
        """Hook the activation modules only when the coming step is one to draw: a logging step whose
        window (the ``log_every`` steps up to it) holds a multiple of ``every``."""
        coming, log_every = trainer.step + 1, trainer.config.log_every
        if coming % log_every or coming // self.every == (coming - log_every) // self.every:
            return
        for name, module in trainer.model.named_modules():
            if isinstance(module, (*RECTIFIERS, *SQUASHERS)):
                self.hooks.append(module.register_forward_hook(self.keeper(name)))

    def keeper(self, name: str):
        def keep(module, inputs, output):
            # setdefault: the first micro-batch only (activation checkpointing runs the forward twice)
            self.captured.setdefault(name, (module, output.detach()))
        return keep

    def detach_hooks(self) -> None:
        for hook in self.hooks:
            hook.remove()
        self.hooks = []

    def on_before_optimizer_step(self, trainer):
        if not self.hooks:
            return
        self.detach_hooks()
        step = trainer.step + 1  # the step being taken
        for name, (module, output) in self.captured.items():
            self.add_histogram(f"activations/{name}", output, step)
            if isinstance(module, RECTIFIERS):
                self.numbers[f"dead_units/{name}"] = dead_fraction(output)
            else:
                low, high = next(bounds for kind, bounds in SQUASHERS.items() if isinstance(module, kind))
                self.numbers[f"saturated/{name}"] = saturated_fraction(output, low, high)
        self.captured = {}
        gradients: dict[str, list[torch.Tensor]] = {}
        for name, parameter in trainer.model.named_parameters():
            if parameter.grad is not None:
                gradients.setdefault(layer_of(name), []).append(parameter.grad.flatten())
        for layer, grads in gradients.items():
            self.add_histogram(f"gradients/{layer}", torch.cat(grads), step)
        self.tensorboard.writer.flush()

    def add_histogram(self, tag: str, tensor: torch.Tensor, step: int) -> None:
        values = finite_values(tensor)
        if values.numel():  # an all-NaN tensor has nothing to bin
            self.tensorboard.writer.add_histogram(tag, values, global_step=step)

    def on_measure(self, trainer, record):
        record.update(self.numbers)  # filled on the histogram step only, which is a logging step
        self.numbers = {}

    def on_run_end(self, trainer, status):
        self.detach_hooks()  # a run that died mid-step leaves the model as it found it
        self.captured = {}
