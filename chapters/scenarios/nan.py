"""nan -- the loss becomes NaN (or inf), and stays NaN: NaN spreads through every operation it touches.

Symptom: a non-finite loss at a recorded step (logged as ``NaN``, never dropped), with a ``nan`` event in
the log naming the step. From then on every loss and every weight is NaN.

How to see it: the first non-finite step in the log, and what happened just before it -- a gradient
norm growing by orders of magnitude (learning rate), nothing unusual at all (a bad batch), or a crash
naming an index (bad token ids). ``clinic replay RUN_DIR`` re-runs the exact step and names the first
tensor that went non-finite.

Causes (``--cause``), most common first, each with its fix:

* ``lr_spike`` -- the peak learning rate is far too high and there is no warmup: each Adam step moves every
  weight by about ``lr``, activations grow by orders of magnitude per step until they overflow. In fp32
  that takes an absurd LR (here 10,000x the sane one); in fp16 or bf16 far less: at a merely 100x LR the
  fp32 run "only" diverges, which the doctor calls ``divergence``.
  Fix: a sane peak LR with linear warmup.
* ``all_ignored_labels`` -- a batch in which every label is -100 (e.g. packing left a batch of pure prompt
  or padding). The mean loss over zero positions is 0/0 = NaN. PyTorch's gradient of that NaN is zero, so
  the weights survive -- but the logged loss is NaN at that step, every average that includes it is NaN,
  and a logger that filters NaN hides the evidence. Fix: check batches and drop (or fix) the ones with
  no label to learn from.
* ``bad_token_ids`` -- a token id >= vocab size. On the CPU the embedding lookup fails with an index error
  (a clear data error); on CUDA it is a device-side assert that kills the process's CUDA context.
  Fix: validate ids before training (``clinic sanity`` does), and drop or repair the bad rows.
* ``fp16_no_scaler`` -- CUDA fp16 autocast without a GradScaler: fp16's narrow range (max 65504) overflows
  to inf. Fix: bf16 (fp32's range) or fp16 with a GradScaler. CUDA only: the CPU has no comparable fp16
  training path, so on the CPU this cause is skipped with that reason.

Confirm: the fixed run's loss is finite at every step and the log has no ``nan`` event.
"""

from __future__ import annotations

import dataclasses

from chapters.core.corpus import ALPHABET
from chapters.core.model import IGNORE_INDEX
from chapters.forensics import NanForensics
from chapters.records.runlog import RunLog
from chapters.scenarios.base import Options, RunPlan, doctor_shows, tiny_plan

ID = "nan"
LABEL = "nan_loss"
EXPECT_SYMPTOM = True
CAUSES = ("lr_spike", "all_ignored_labels", "bad_token_ids", "fp16_no_scaler")
DEFAULT_CAUSE = "lr_spike"
STEPS = 60
POISON_EVERY = 25  # every 25th batch is poisoned: the first at step 25 (0-based step index 24)


def skip_reason(options: Options) -> str | None:
    """Why this cause cannot run on this device, or None."""
    if (options.cause or DEFAULT_CAUSE) == "fp16_no_scaler" and not options.on_cuda:
        return "fp16_no_scaler needs CUDA: CPU autocast has no comparable fp16 training path"
    return None


def is_poisoned(step: int) -> bool:
    return step % POISON_EVERY == POISON_EVERY - 1


def mask_all_labels(batch: dict, step: int) -> dict:
    """The bug: on poisoned steps the whole batch has nothing to predict."""
    if is_poisoned(step):
        batch = {**batch, "labels": batch["labels"].new_full(batch["labels"].shape, IGNORE_INDEX)}
    return batch


def corrupt_token_ids(batch: dict, step: int) -> dict:
    """The bug: on poisoned steps one id is far outside the vocabulary (a tokenizer/vocab mismatch)."""
    if is_poisoned(step):
        input_ids = batch["input_ids"].clone()
        input_ids[0, 3] = 10_000
        batch = {**batch, "input_ids": input_ids}
    return batch


def drop_unusable_batches(vocab_size: int):
    """The fix for both data causes: a check in front of the model that drops batches it cannot use."""

    def check(batch: dict, step: int) -> dict | None:
        ids = batch["input_ids"]
        if (batch["labels"] == IGNORE_INDEX).all() or (ids < 0).any() or (ids >= vocab_size).any():
            return None
        return batch

    return check


def with_forensics(plan: RunPlan) -> RunPlan:
    """Broken runs keep NaN forensics on, so ``clinic replay`` can re-run their first bad step."""
    return dataclasses.replace(plan, extra_callbacks=lambda run_dir: [NanForensics(run_dir)])


def broken(options: Options) -> RunPlan:
    return with_forensics(_broken(options))


def _broken(options: Options) -> RunPlan:
    cause = options.cause or DEFAULT_CAUSE
    if cause == "lr_spike":
        return tiny_plan(options, steps=STEPS, lr=100.0, warmup_steps=0)  # 10,000x the sane 1e-2
    plan = fixed(options)
    if cause == "all_ignored_labels":
        return dataclasses.replace(plan, batch_transform=mask_all_labels)
    if cause == "bad_token_ids":
        # Isolated: on CUDA the device-side assert leaves the process's CUDA context unusable.
        return dataclasses.replace(plan, batch_transform=corrupt_token_ids, isolated=True)
    # fp16_no_scaler (CUDA): the small preset, fp16 autocast, loss scaling off, an aggressive LR.
    plan = tiny_plan(options, steps=STEPS, lr=3e-2, warmup_steps=0, precision="fp16", loss_scaling=False)
    return dataclasses.replace(plan, preset="small")


def fixed(options: Options) -> RunPlan:
    cause = options.cause or DEFAULT_CAUSE
    plan = tiny_plan(options, steps=STEPS)
    if cause in ("all_ignored_labels", "bad_token_ids"):
        return dataclasses.replace(plan, batch_transform=drop_unusable_batches(vocab_size=len(ALPHABET)))
    if cause == "fp16_no_scaler":
        plan = tiny_plan(options, steps=STEPS, lr=3e-2, warmup_steps=0, precision="bf16")
        return dataclasses.replace(plan, preset="small")
    return plan


def symptom(run: RunLog) -> bool:
    """The doctor names ``nan_loss`` first -- or, for bad ids on the CPU, the run failed with an index error.

    A documented gap in the doctor (docs/doctor.md, "Known gaps"): on the CPU the ``bad_token_ids`` run
    crashes at its first bad batch with a data error, before any metric moves, and no rule reads
    ``run_end``'s error text. The crash itself is the symptom the lesson is about."""
    error = run.error or ""
    crashed_on_bad_ids = run.status == "failed" and ("index out of range" in error or "device-side assert" in error)
    return crashed_on_bad_ids or doctor_shows(run, LABEL)
