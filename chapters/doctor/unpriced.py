"""A class count that does not price the training loss: the run is read as if none were declared.

ln K is what a model that knows nothing scores -- under the cross-entropy over K classes. ``run_start``
declares how many classes the *data* has whatever loss the run trains with: a triplet margin loss on 8
classes starts at its margin (1.0, half of ln 8), a contrastive pair loss near 0.1, a multi-label
classifier's mean binary cross-entropy at ln 2 whatever K is. Read against ln K, such a run "learned" half
its loss before its first step: a plateau at the margin reads as learning, and a blow-up, a relapse or a
frozen group is judged against a level the loss never had (an outside metric-learning set, 2026-12-06:
an SGD run at 1e-6, flat at 0.96 beside ln 8 = 2.08, was healthy).

Statistic: the first training record, when it is written by step ``EARLY``. Threshold: under ``UNPRICED``
(half) of ln K. Why: an untrained classifier's logits are small, so its cross-entropy starts near ln K, and
the mean over its first ten steps has had little time to fall. On twenty-four outside sets, 49 runs opened
that low that early: 42 metric-learning runs (margin and pair losses, 0.04-0.48 x ln K) and 5 multi-label
classifiers -- and 2 cross-entropy runs that had learned fast within their first record (Adam at batch
512 on easy blobs: 0.44 and 0.49 x ln 6 at step 10). Those two lose little: read against their first record
they are judged as every log without a class count is, and their diagnosis did not change. A first record
written later averages the steepest part of the descent (fast runs logged first at step 40-50 stand at
0.3-0.5 x ln K), and is left alone.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from chapters.records.runlog import CLASS_COUNT_KEYS

EARLY = 10  # steps: a first record written this early still shows the untrained loss
UNPRICED = 0.5  # ... and under this share of ln K, the loss is no cross-entropy over the K classes


def unpriced(run):
    """``run`` itself when its class count prices its training loss (or it declares none); else a copy whose
    ``run_start`` holds no class count, with a note saying why."""
    count = run.class_count
    losses = run.train[["step", "train_loss"]].to_numpy(dtype=float)
    losses = losses[np.isfinite(losses[:, 1]) & (losses[:, 1] > 0)]
    if count is None or len(losses) == 0:
        return run
    step, first = int(losses[0, 0]), float(losses[0, 1])
    if step > EARLY or first >= UNPRICED * math.log(count):
        return run
    note = (f"the first training loss, {first:.4g} at step {step}, is under half of ln {count} = "
            f"{math.log(count):.4g}: the loss is no cross-entropy over the {count} classes run_start declares "
            "(a margin, contrastive or multi-label loss), so the rules read it against its first record")
    return replace(run, run_start=_without_counts(run.run_start), notes=list(run.notes) + [note], _curves={})


def _without_counts(info: dict) -> dict:
    """``info`` and the dicts inside it, without the keys that declare a class count."""
    return {key: _without_counts(value) if isinstance(value, dict) else value
            for key, value in info.items() if key not in CLASS_COUNT_KEYS}
