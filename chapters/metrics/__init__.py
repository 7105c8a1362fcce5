"""The numbers worth watching during training, one small module (and one callback) each.

Every metric here is a :class:`~chapters.core.callbacks.Callback` that *adds keys* to the trainer's metric
record in ``on_measure``; the logging levels then write that record as it is. Two rules keep them cheap:

* a metric that needs this step's gradients or weights looks at them in ``on_before_optimizer_step`` --
  but only on steps that will be logged (:func:`is_logging_step`); the other steps pay nothing. Gradient
  norms are not computed again at all: the trainer keeps every parameter's, which it needs to clip
  (``trainer.parameter_grad_norms``);
* results stay tensors on the device until ``on_measure``, where one ``.item()`` per number reads them.
  ``.item()`` makes the CPU wait for the GPU, so calling it on every step would stall the pipeline.
"""

from __future__ import annotations


def is_logging_step(trainer) -> bool:
    """Will the step now in progress end with a metric record?

    Call it from ``on_before_optimizer_step``: ``trainer.step`` still counts the steps *completed*, so the
    one in progress is ``trainer.step + 1``. The rule mirrors ``Trainer.fit``: every ``log_every`` steps,
    and the last step.
    """
    step = trainer.step + 1
    return step % trainer.config.log_every == 0 or step == trainer.config.steps
