"""Level 0 -- ``print``: the bare minimum.

It needs nothing and works at once, which is why every training script starts here. Its trade-offs
are worth knowing before they bite:

* **History is lost.** The numbers live in the terminal's scrollback; close the window, or let a long
  run scroll past, and they are gone. Nothing can plot them or compare two runs afterwards.
* **Several processes interleave.** With data-parallel training every rank runs the same script, so every
  line appears once per GPU, in whatever order the processes reach it, sometimes cut into each other.
  (Level 1 writes from rank 0 only.)
* **It breaks progress bars.** A ``print`` in the middle of a ``tqdm`` bar leaves half-drawn bars behind
  (Level 1 routes its lines around the bar).

This printer at least prints on logging steps only: the values come from the metric record, read once
per window, rather than a ``loss.item()`` in every step.
"""

from __future__ import annotations

from chapters.core.callbacks import Callback


def format_record(record: dict) -> str:
    """``step 120 | train_loss 1.9312 | lr 2.80e-03 | ...`` -- every key, in record order."""
    parts = [f"step {record['step']}"]
    for key, value in record.items():
        if key in ("step", "epoch", "timestamp"):
            continue
        parts.append(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}")
    return " | ".join(parts)


class PrintLogger(Callback):
    """Prints each metric record, evaluation and event on one line of standard output."""

    def on_log(self, trainer, record):
        print(format_record(record))

    def on_eval_end(self, trainer, record):
        print(format_record(record))

    def on_event(self, trainer, event):
        print(f"event {event['event']} at step {event['step']}: "
              + ", ".join(f"{k}={v}" for k, v in event.items() if k not in ("event", "step", "timestamp")))
