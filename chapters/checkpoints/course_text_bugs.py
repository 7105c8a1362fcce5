"""The course text's checkpoint code, rewritten to keep its bugs -- study material, do not use.

Each function below behaves like the course text's version, flaws included; the tests in
``tests/test_course_text_bugs.py`` show every flaw happening and our modules not having it. Exercise 08 asks
you to fix them. The bugs:

``NaiveTopK``
  1. names files by how many it currently keeps (``ckpt_{len(kept)}.pt``): after a deletion the next save
     reuses a name and overwrites a checkpoint it still ranks as kept;
  2. so its "delete the worst" step can delete a file that a *kept* entry points to -- after the sequence
     5, 4, 3, 2, 1 with K=2 it claims two checkpoints and there are none on disk;
  3. its report line uses a name that does not exist in that scope (``NameError`` after every save);
  4. its ranking lives only in memory: a restarted run forgets which files it kept.

``naive_safe_load``
  5. loads the weights twice, both times with ``strict=False``. What ``strict=False`` hides is *names*:
     missing and unexpected keys become a warning line in the log, and loading goes on with a half-random
     network. It does **not** hide shapes -- a tensor of another width raises ``RuntimeError`` (size
     mismatch) whatever ``strict`` says. So another architecture with the same width "loads", with warnings
     nobody reads; another width crashes.
  6. calls ``torch.load(path)`` without ``weights_only``. Whether that runs code hidden in the file depends on
     torch: before 2.6 the default was full pickle (a file can run any function while it is read); since 2.6
     the default is ``weights_only=True`` and the same call refuses such a file. The pin ``torch>=2.4`` still
     allows 2.4 and 2.5. And on a new torch the risk is one step away: the refusal's own message suggests
     ``weights_only=False`` "if you trust the source", and the environment variable
     ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` turns every such call back into full pickle. Only an explicit
     ``weights_only=True`` is safe on every version and in every environment.
  7. probes with ``randint(0, 1000)``, a vocabulary it does not know: it crashes on a 33-token model (and
     would miss out-of-range errors on a bigger one).
  8. returns ``checkpoint.get("epoch", 0), checkpoint.get("global_step", 0)`` -- keys the course text's
     checkpointer never writes. Every resume reports (0, 0): the schedule warms up again and the data
     order starts over, with no error anywhere.
  9. its "verification" logs the probe's *shape* and calls that a pass: a checkpoint whose weights are NaN
     gives logits of the right shape, all NaN, and passes.
"""

from __future__ import annotations

import logging
import os

import torch

logger = logging.getLogger(__name__)


class NaiveTopK:
    def __init__(self, directory, k=3, metric_name="val_loss", mode="min"):
        self.directory, self.k, self.metric_name, self.mode = directory, k, metric_name, mode
        self.kept = []  # [(value, path)] -- bug 4: never written anywhere

    def maybe_save(self, state: dict, metrics: dict) -> None:
        value = metrics[self.metric_name]
        path = os.path.join(self.directory, f"ckpt_{len(self.kept)}.pt")  # bug 1
        worst = self.kept[-1][0] if self.kept else None
        if len(self.kept) < self.k or (value < worst if self.mode == "min" else value > worst):
            torch.save(state, path)
            self.kept.append((value, path))
            self.kept.sort(key=lambda item: item[0], reverse=self.mode == "max")
            while len(self.kept) > self.k:
                _, dropped = self.kept.pop()
                if os.path.exists(dropped):
                    os.remove(dropped)  # bug 2: `dropped` may be the name a kept entry points to
            rank = self.kept.index((value, path)) + 1
            print(f"saved {metric_name}={value:.4f} (rank {rank}/{self.k})")  # noqa: F821 -- bug 3


def naive_safe_load(model: torch.nn.Module, path) -> tuple[int, int]:
    checkpoint = torch.load(path, map_location="cpu")  # bug 6 on torch < 2.6 (see above)
    model.load_state_dict(checkpoint["model"], strict=False)  # bug 5 (and again on the next line)
    missing, unexpected = model.load_state_dict(checkpoint["model"], strict=False)
    if missing:
        logger.warning("Missing keys in checkpoint: %s", missing)
    if unexpected:
        logger.warning("Unexpected keys in checkpoint: %s", unexpected)
    dummy = torch.randint(0, 1000, (1, 16))  # bug 7
    with torch.no_grad():
        output = model(dummy)
    logger.info("Checkpoint verification passed: output shape=%s", tuple(output["logits"].shape))  # bug 9
    return checkpoint.get("epoch", 0), checkpoint.get("global_step", 0)  # bug 8
