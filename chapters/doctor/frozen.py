"""``frozen_parameters``: part of the model never changes.

Statistic: per-group update ratio ``update_ratio/<group>`` (||dw|| / ||w|| of a step) or per-group
gradient norm ``grad_norm/<group>``. Threshold: a group at exactly 0 (below ``ZERO``) in at least 90 % of
its records while another group moves. Without per-group keys: ``trainable_params < total_params`` in
``run_start`` by at least ``MIN_FROZEN_SHARE`` (1 %) of the parameters -- weaker evidence, since freezing is sometimes intended (fine-tuning). Why it matters: a
frozen token embedding (``requires_grad=False``, a forgotten freeze from fine-tuning code, or parameters
left out of the optimizer's groups) still trains "a bit" through the other layers, so the loss curve alone
only looks slow; the update ratio shows 0 at once.
For scale, CS231n's rule of thumb is an update ratio near 1e-3 for a healthy layer.

An update of exactly 0 is also what float32 makes of a step far below a weight's precision: when the
groups' update ratios fade layer by layer, the smallest moving one below 1e-4 of the median group's
(:func:`gradients.updates_vanish`), the zero groups are the end of that fade -- vanishing gradients,
which that rule reports -- not a freeze. (Until 2026-12-02 such runs, logging update ratios and no
per-group gradient norms, were ``frozen_parameters`` at 0.9.)
"""

from __future__ import annotations

import numpy as np

from chapters.doctor.findings import Finding
from chapters.doctor.gradients import VANISH_RATIO, updates_vanish
from chapters.doctor.signals import group_keys

ZERO = 1e-12
# From run_start's counts alone, a freeze that matters holds a real share of the model. A handful of
# non-trainable parameters -- a fixed temperature in a contrastive loss, a constant scale -- is a design
# choice, not a layer someone forgot to unfreeze: an independent two-tower model with 1 of 14,401
# parameters fixed (its temperature) was called frozen, healthy and dead alike (2026-12-03).
MIN_FROZEN_SHARE = 0.01
LESSON = "docs/doctor.md#frozen_parameters"


def check(run) -> list[Finding]:
    for prefix in ("update_ratio", "grad_norm"):
        keys = group_keys(run.train, prefix)
        if len(keys) < 2 or (prefix == "update_ratio" and updates_vanish(run)):
            continue  # too few groups; or updates fading layer by layer to nothing: vanishing gradients
        table = run.train[keys].astype(float)
        zero_share = (table.abs() < ZERO).sum() / table.notna().sum().replace(0, np.nan)
        frozen = [k for k in keys if zero_share.get(k, 0) >= 0.9 and not _has_gradient(run, k)]
        moving = [k for k in keys if k not in frozen and (table[k].abs() > ZERO).any()]
        if frozen and moving:
            step = int(run.train.loc[table[frozen[0]].notna(), "step"].iloc[0])
            names = ", ".join(k.split("/", 1)[1] for k in frozen)
            return [_finding(0.9, step, f"{prefix} is 0 for {names} in "
                                        f"{zero_share[frozen[0]]:.0%} of records while "
                                        f"{moving[0].split('/', 1)[1]} moves")]
    total, trainable = run.info("total_params"), run.info("trainable_params")
    if total and trainable is not None and total - trainable >= MIN_FROZEN_SHARE * total:
        return [_finding(0.62, int(run.run_start.get("step") or 0),
                         f"run_start says {int(total - trainable):,} of {int(total):,} parameters are not "
                         "trainable")]
    return []


def _has_gradient(run, key: str) -> bool:
    """Does the group get a gradient too small to move it? A group with no update but a gradient far below
    the other groups' -- under ``VANISH_RATIO`` of the largest group's, as the vanishing rule measures -- is
    not frozen: its updates are too small to change a float32 weight at all, and the gradient rules report
    it. A group with no update and a gradient as large as the others' *is* frozen: the optimizer never
    steps it (its parameters were left out of the optimizer's groups) -- real runs logging both per-group
    norms and update ratios, with the hidden layers left out of Adam, were called healthy or
    ``grad_explosion`` until 2026-12-02 (0 of 6 found)."""
    gradient = "grad_norm/" + key.split("/", 1)[1]
    if gradient not in run.train:
        return False
    groups = run.train[group_keys(run.train, "grad_norm")]
    own = run.train[gradient].abs()
    share = (own / groups.abs().max(axis=1)).replace([np.inf, -np.inf], np.nan).dropna()
    return bool((own > ZERO).any()) and len(share) > 0 and float(share.median()) < VANISH_RATIO


def _finding(score, step, evidence) -> Finding:
    return Finding("frozen_parameters", score, step, evidence,
                   fix="set requires_grad=True on the frozen parameters and build the optimizer from all of "
                       "model.parameters() after that; if the freeze is intended, ignore this finding",
                   experiment="list [n for n, p in model.named_parameters() if not p.requires_grad] and check "
                              "update_ratio per group after one step",
                   lesson=LESSON)
