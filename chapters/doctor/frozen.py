"""``frozen_parameters``: part of the model never changes.

Statistic: per-group update ratio ``update_ratio/<group>`` (||dw|| / ||w|| of a step) or per-group
gradient norm ``grad_norm/<group>``. Threshold: a group at exactly 0 (below ``ZERO``: anything float32 tells
from 0 is a gradient) in at least 90 % of its records while another group moves (unless ``run_start`` counts under
``MIN_FROZEN_SHARE`` of the parameters as not trainable: that handful, fixed on purpose, :func:`_a_handful_fixed`)
-- or at exactly 0 from some
record to the end, over a quarter of its records at least, while two groups or more move (or one, when the
group's gradient vanished from the log there or stayed live to the end: :func:`_gradient_gone_since`,
:func:`_gradient_kept_since`) and the loss carries on below the untrained level (:func:`_zero_since`,
:func:`_loss_carried_on`: frozen from mid-run, 2026-12-03).
What ``run_start``'s counts say (``trainable_params < total_params``) is never a finding on its own, only a
note under the verdict (:func:`counted_fixed`): so much is fixed by design -- the momentum target encoder of
BYOL or MoCo (half the model), a frozen pretrained backbone under a new head, a VQ-VAE codebook updated by
moving averages, a fixed projection or temperature -- that the counts alone cannot tell a forgotten freeze
from a design. Until 2026-12-07 a count of 0.1 % and more was ``frozen_parameters`` at 0.62 in a log without
per-group keys: on thirteen healthy runs of an outside BYOL/MoCo set and eight of an outside VQ-VAE set
(every one logged without group keys). The cost: the four count-only freezes that outside authors marked
visible (44-98 % of their models), and a bench family's frozen embedding logged without group keys. The
per-group keys show a freeze: a group at exactly 0. Why it
matters: a frozen token embedding (``requires_grad=False``, a forgotten freeze from fine-tuning code, or
parameters left out of the optimizer's groups) still trains "a bit" through the other layers, so the loss
curve alone only looks slow; the update ratio shows 0 at once.
For scale, CS231n's rule of thumb is an update ratio near 1e-3 for a healthy layer.

When what stands still is every group below the output layer -- value and logged gradient exactly 0, from
the first record or from mid-run -- it is a network dead below its head, and this rule reports
``loss_plateau`` instead (:func:`_dead_below`): a freeze leaves a gradient to log or a count in ``run_start``.
So is any still group whose logged gradient is exactly 0 on every record in a model that ``run_start``
counts wholly trainable (:func:`_all_trainable`): dead units, not a freeze.

An update of exactly 0 is also what float32 makes of a step far below a weight's precision: when the
groups' update ratios fade layer by layer, the smallest moving one below 1e-4 of the median group's
(:func:`gradients.updates_vanish`), the zero groups are the end of that fade -- vanishing gradients,
which that rule reports -- not a freeze. (Until 2026-12-02 such runs, logging update ratios and no
per-group gradient norms, were ``frozen_parameters`` at 0.9.) And when *no* group's typical update reaches
float32's resolution, a group at 0 stands still like all the rest: the learning rate is too small for
anything to move (:func:`_moves`), and ``loss_plateau`` reports the loss that goes nowhere.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chapters.doctor.findings import Finding
from chapters.doctor.gradients import VANISH_RATIO, updates_vanish
from chapters.doctor.plateau import DEAD_EXPERIMENT, DEAD_FIX, MIN_DROP, val_below_untrained
from chapters.doctor.plateau import LESSON as PLATEAU_LESSON
from chapters.doctor.signals import group_keys, reference_level, smooth, val_losses, window_for, zeros_to_the_end

# "Exactly 0": a frozen group's gradient is None (logged 0) and its update is 0. Anything float32 can still
# tell from 0 is a gradient, however small: a sigmoid stack's first layer gets 1e-14 of the head's norm, and
# its update rounds to 0 beside its weights -- vanishing, not frozen (a threshold of 1e-12 until 2026-12-03
# called three such outside runs frozen).
ZERO = 1e-30
# From run_start's counts alone, a freeze that matters holds a real share of the model. A handful of
# non-trainable parameters -- a fixed temperature in a contrastive loss, a constant scale -- is a design
# choice, not a layer someone forgot to unfreeze: an independent two-tower model with 1 of 14,401
# parameters fixed (its temperature) was called frozen, healthy and dead alike (2026-12-03). A tenth of a
# percent sits between the two: the designed handfuls on 25 outside sets were 0.002-0.014 % of their models,
# the smallest forgotten layer 0.94 % (an AlexNet's first conv, 448 of 47,493 parameters, excused as a
# "handful" while the share was 1 % until 2026-12-05).
MIN_FROZEN_SHARE = 0.001
FROZEN_TAIL = 0.25  # a group at exactly 0 from some record to the end, over this share of its records...
MIN_TAIL = 5  # ...and this many: frozen from mid-run (_zero_since)
LAST_SHARES = 3  # _had_gradient: a group's last records with a gradient, where a fade ends and a freeze begins
# The smallest relative change a float32 weight can make: a step below it rounds away (FLOAT32_STEP, _moves).
FLOAT32_STEP = float(np.finfo(np.float32).eps)
LESSON = "docs/doctor.md#frozen_parameters"


def check(run) -> list[Finding]:
    for prefix in ("update_ratio", "grad_norm"):
        keys = group_keys(run.train, prefix)
        if len(keys) < 2 or (prefix == "update_ratio" and updates_vanish(run)):
            continue  # too few groups; or updates fading layer by layer to nothing: vanishing gradients
        table = run.train[keys].astype(float)
        if prefix == "update_ratio" and not any(_moves(table[k]) for k in keys):
            continue  # no group moves a float32 weight: the learning rate is too small for anything (_moves)
        zero_share = (table.abs() < ZERO).sum() / table.notna().sum().replace(0, np.nan)
        always = {k for k in keys if zero_share.get(k, 0) >= 0.9} if not _a_handful_fixed(run) else set()
        since = {k: _zero_since(table[k].dropna()) for k in keys if k not in always}
        since = {k: row for k, row in since.items() if row is not None and _loss_carried_on(run, row)}
        frozen = [k for k in keys if (k in always and not _has_gradient(run, k))
                  or (k in since and not _had_gradient(run, k))]
        moving = [k for k in keys if k not in frozen and (table[k].abs() > ZERO).any()]
        if len(moving) < 2:  # a network that died leaves one group learning, the head's bias (the prior)
            frozen = [k for k in frozen if k in always or _gradient_gone_since(run, k, since[k])
                      or _gradient_kept_since(run, k, since[k])]
        if frozen and _learned_nothing(run) and not _counts_a_freeze(run):
            frozen = [k for k in frozen if not _gradient_is_zero(run, k)]  # dead units, not a freeze
        dead = _dead_below(run, table) if frozen and moving else None
        if dead is not None:  # what stood still is everything below the output layer: dead, not frozen
            still, head, row = dead
            return [_dead_below_finding(int(run.train.loc[row, "step"]), prefix, still, head)]
        if not frozen:
            continue
        first = frozen[0]
        row = table[first].notna().idxmax() if first in always else since[first]  # where it stood still
        step = int(run.train.loc[row, "step"])
        if _all_trainable(run) and all(_gradient_is_zero(run, k) for k in frozen):
            return [_dead_units_finding(step, frozen)]  # counted trainable, yet no gradient at all: dead units
        if moving:
            names = _group_names(frozen)
            when = f"in {zero_share[first]:.0%} of records" if first in always else f"from step {step} to the end"
            return [_finding(0.9, step, f"{prefix} is 0 for {names} {when} while {moving[0].split('/', 1)[1]} "
                                        "moves")]
    return []  # no group stood still (or none was logged): the counts are a note, not a finding (counted_fixed)


def counted_fixed(run, findings: list[Finding]) -> list[str]:
    """A note (not a finding) when ``run_start`` counts parameters as not trainable and no rule named a
    freeze: the fact is worth a look -- a forgotten ``requires_grad=False`` -- but on its own it is no
    anomaly, since so much is fixed by design (module docstring)."""
    share = _fixed_share(run)
    if share < MIN_FROZEN_SHARE or any(f.anomaly == "frozen_parameters" for f in findings):
        return []
    total, trainable = run.info("total_params"), run.info("trainable_params")
    return [f"run_start counts {int(total - trainable):,} of {int(total):,} parameters ({share:.1%}) as not "
            "trainable: fixed by design, or a freeze left on by mistake?"]


def _a_handful_fixed(run) -> bool:
    """Does ``run_start`` say that some parameters are not trainable, but fewer than ``MIN_FROZEN_SHARE``
    of them?

    Then a group that stands still from the first record is that handful, fixed on purpose: the code set
    ``requires_grad=False`` on it and counted it -- a contrastive loss's temperature, a constant scale.
    A freeze by mistake either holds a real share of the model (a frozen embedding) or leaves the counts
    equal (parameters left out of the optimizer are still ``requires_grad``), and stays a finding. (Three
    outside two-tower models logging ``update_ratio/temperature`` at 0 beside 1 of 7,361 parameters not
    trainable were ``frozen_parameters`` at 0.9 until 2026-12-05 -- healthy, or a plateau the finding
    hid.)"""
    return 0 < _fixed_share(run) < MIN_FROZEN_SHARE


def _counts_a_freeze(run) -> bool:
    """Does ``run_start`` count at least ``MIN_FROZEN_SHARE`` of the parameters as not trainable?

    Why it settles a group at exactly 0 beside a loss that learned nothing: dead units and a
    ``requires_grad=False`` freeze both log a gradient of 0, but only the freeze takes parameters out of the
    trainable count -- dead ReLUs are as trainable as any. An outside VAE whose decoder was frozen from the
    first step (47 % of the model not trainable) could not lower its loss at all, and was ``loss_plateau``
    until 2026-12-06, as was a DNA-motif CNN with its convolutions frozen (95 %)."""
    return _fixed_share(run) >= MIN_FROZEN_SHARE


def _fixed_share(run) -> float:
    """The share of the parameters that ``run_start`` counts as not trainable (``total_params`` minus
    ``trainable_params``, over ``total_params``); 0 when it does not give both counts."""
    total, trainable = run.info("total_params"), run.info("trainable_params")
    return (total - trainable) / total if total and trainable is not None else 0.0


def _zero_since(values) -> int | None:
    """The row label where a group's values became exactly 0 and stayed 0 to the end -- over at least
    ``FROZEN_TAIL`` of its records and ``MIN_TAIL`` records -- after moving before; else None.

    Why: a freeze can start mid-run -- a fine-tuning script that freezes a block at an epoch boundary and
    forgets to unfreeze it, an optimizer rebuilt without that group's parameters -- and then the group
    moves for a while and stands still for the rest of the run: exactly 0, record after record, which no
    moving weight writes (an independent transformer whose attention stopped at mid-run, 58 % of its
    records at 0, was healthy until 2026-12-03: the 90 % asked of a group frozen from the start)."""
    zero = (values.abs() < ZERO).to_numpy()
    start = zeros_to_the_end(zero)
    if start is None:
        return None
    return values.index[start] if len(zero) - start >= max(MIN_TAIL, FROZEN_TAIL * len(zero)) else None


def _gradient_key(key: str) -> str:
    """The ``grad_norm/<group>`` column of the group that ``key`` (``update_ratio/<group>`` or ``grad_norm/<group>``)
    names."""
    return "grad_norm/" + key.split("/", 1)[1]


def _gradient_gone_since(run, key: str, row) -> bool:
    """Was the group's gradient norm logged, a number, before ``row`` (where its update went to 0 for good),
    and never from there on (missing, or written NaN)?

    Why: units that die still get a gradient -- a tensor of zeros, logged 0 -- while a parameter taken out of
    autograd (``requires_grad=False``) gets none at all: ``p.grad`` is ``None``, and a logger has no number to
    write. So a gradient that vanishes from the log at the very record the update stops is a freeze, even
    in a model of two groups where the one left moving could be a dead network's head (an outside ranker,
    its hidden layer frozen at step 60 of 300, loss carrying on: healthy until 2026-12-06)."""
    gradient = _gradient_key(key)
    if gradient not in run.train:
        return False
    position = run.train.index.get_loc(row)
    values = run.train[gradient].astype(float)
    return bool(np.isfinite(values.iloc[:position]).any()) and not np.isfinite(values.iloc[position:]).any()


def _gradient_kept_since(run, key: str, row) -> bool:
    """Did the group keep a live gradient from ``row`` (where its update went to 0 for good) to the end: its
    gradient norm logged and above ``ZERO`` at every record from there on, and its median share of the largest
    group's there at least ``VANISH_RATIO``?

    Why: units that die pass nothing back -- their layers get a gradient of exactly 0, and only the head's
    bias goes on learning, the one group that moves (which is why a single moving group is otherwise read as a
    dead network). A group that still gets a gradient as large as the others' and takes no step was taken out
    of the optimizer. An outside diffusion model whose optimizer was rebuilt at step 500 over the head alone
    was ``grad_explosion`` until 2026-12-06: ``optimizer.zero_grad()`` clears only the parameters it holds,
    so the left-out layers' gradients piled up step after step (0.2 -> 22), beside updates of exactly 0."""
    gradient = _gradient_key(key)
    if key.startswith("grad_norm/") or gradient not in run.train:
        return False
    after = run.train[gradient].iloc[run.train.index.get_loc(row):].astype(float)
    share, _ = _gradient_share(run, key)
    share = share[share.index >= row]
    return (len(after) > 0 and bool((np.isfinite(after) & (after.abs() > ZERO)).all()) and len(share) > 0
            and float(share.median()) >= VANISH_RATIO)


def _loss_carried_on(run, row) -> bool:
    """Did the training loss carry on as before from ``row`` (a row label of the training records) on: its
    median over the rest of the run at most ``1 + MIN_DROP`` x its median over as many records before?

    Why: units that die stop moving too -- one huge update switches every ReLU off, and the layers behind
    them get exactly no gradient and no update from then on -- but the loss goes back to ln K with them
    (``loss_plateau``), or blew up first (``divergence``). A group frozen by a bug leaves the loss where
    the rest of the model can take it -- below the untrained level (:func:`signals.reference_level`) by
    ``MIN_DROP``, where a network that died at its first steps sits, about ln K, with its layers still."""
    if "train_loss" not in run.train:
        return True
    loss = run.train["train_loss"]
    position = run.train.index.get_loc(row)
    after = loss.iloc[position:].dropna()
    before = loss.iloc[max(0, position - len(after)):position].dropna()
    if before.empty or after.empty:
        return True
    positive = run.curve("train_loss")
    untrained = reference_level(run, positive[positive > 0]) if (positive > 0).any() else math.inf
    level = float(after.median())
    return level <= (1 + MIN_DROP) * float(before.median()) and level <= (1 - MIN_DROP) * untrained


def _learned_nothing(run) -> bool:
    """Did the training loss (rolling median) never get ``MIN_DROP`` below the untrained level
    (:func:`signals.reference_level`: ln K when declared) -- nor, with ln K declared, the validation loss
    (its last 3 evaluations, :func:`plateau.val_below_untrained`: a distilled student's KL + cross-entropy
    train loss, 4.6 -> 1.8, never got under ln 4 while its val cross-entropy fell to 0.6)?"""
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < 8:
        return False
    reference = reference_level(run, loss)
    val = val_losses(run)
    if len(val) >= 3 and val_below_untrained(run, val.index[-3], reference):
        return False
    return float(smooth(loss, window_for(len(loss))).min()) > (1 - MIN_DROP) * reference


def _dead_below(run, table: pd.DataFrame) -> tuple[list[str], str, int] | None:
    """Is every watched group but one still at the end -- its value *and* its logged gradient exactly 0 from
    some record on (:func:`_still_from`), two groups at least? Then (the still groups, the one that moves, the
    row where the last of them went still); else None.

    Why: a layer whose ReLUs are all switched off (biases far below zero, or knocked there mid-run) passes
    zeros on: no gradient reaches it or anything below it, and the layer above gets zero inputs -- so the
    output layer alone learns, and only its bias: the loss falls to the entropy of the label frequencies and
    stops there, below ln K, so :func:`_learned_nothing` does not see it. That is a dead network
    (``loss_plateau``), not a freeze. A freeze of everything but the head is a linear probe, and almost always
    a choice; the ones by mistake on the outside sets were parameters left out of the optimizer, whose
    gradients are logged above 0 (five such) -- while four dead networks, all but their head at a gradient of
    exactly 0 from the first record, and a sigmoid stack whose encoder died at step 200 of 400 (every group
    below the decoder at 0 from there), were called frozen until 2026-12-06. A ``run_start`` that counts
    parameters as not trainable says the stillness is a ``requires_grad=False`` freeze, chosen or not, and
    the frozen rule reads it so."""
    if _fixed_share(run) > 0 or len(table.columns) < 3:
        return None
    still, moving = {}, []
    for key in table.columns:
        gradient = _gradient_key(key)
        if gradient not in run.train:
            return None  # no gradient logged: a freeze and a dead layer look alike
        since = _still_from(table[key].dropna()), _still_from(run.train[gradient].dropna())
        if None in since:
            moving.append(key)
        else:
            still[key] = max(since, key=run.train.index.get_loc)
    if len(moving) != 1 or len(still) < 2:
        return None
    return list(still), moving[0], max(still.values(), key=run.train.index.get_loc)


def _group_names(keys: list[str]) -> str:
    """``update_ratio/embed, update_ratio/head`` -> ``embed, head``: the groups as the evidence names them."""
    return ", ".join(k.split("/", 1)[1] for k in keys)


def _all_trainable(run) -> bool:
    """Does ``run_start`` count every parameter as trainable (``trainable_params`` equal to ``total_params``,
    both given)?

    Why it tells dead units from a freeze: a ``requires_grad=False`` freeze takes its parameters out of the
    trainable count, and parameters left out of the optimizer still get a gradient to log. A group whose
    logged gradient is exactly 0 on every record, in a model counted wholly trainable, is neither: its units
    are dead -- every ReLU below zero, passing zeros on and getting zeros back. Of forty-one runs in twelve
    outside sets that froze a group or were read as frozen, none logged a gradient of exactly 0 for its frozen
    group (absent, NaN or live), and the two that did -- a CTC model whose first layer's biases were set to -8,
    a capsule network whose convolutions died -- were dead networks, ``frozen_parameters`` until 2026-12-06."""
    total, trainable = run.info("total_params"), run.info("trainable_params")
    return bool(total) and trainable is not None and trainable == total


def _dead_units_finding(step: int, dead: list[str]) -> Finding:
    names = _group_names(dead)
    return Finding("loss_plateau", 0.75, step,
                   f"{names}: a gradient of exactly 0 on every record, while run_start counts every parameter as "
                   "trainable -- not frozen (requires_grad=False would leave the count, parameters left out of the "
                   "optimizer would still get a gradient) but dead: units that pass nothing on, so the layers "
                   "above learn without what they should compute", fix=DEAD_FIX, experiment=DEAD_EXPERIMENT,
                   lesson=PLATEAU_LESSON)


def _still_from(values) -> int | None:
    """The row label from which ``values`` are exactly 0 to the end -- all of them, or a tail as
    :func:`_zero_since` asks; else None."""
    if len(values) and bool((values.abs() < ZERO).all()):
        return values.index[0]
    return _zero_since(values)


def _dead_below_finding(step: int, prefix: str, dead: list[str], head: str) -> Finding:
    names = _group_names(dead)
    head = head.split("/", 1)[1]
    return Finding("loss_plateau", 0.85, step,
                   f"from step {step} {names} get a gradient of exactly 0 ({prefix} 0) and only {head} moves: no "
                   f"gradient reaches anything below {head}, whose inputs are all zero -- a dead network, which can "
                   "learn only the output bias (the label frequencies)", fix=DEAD_FIX, experiment=DEAD_EXPERIMENT,
                   lesson=PLATEAU_LESSON)


def _moves(update_ratios: pd.Series) -> bool:
    """Does the group move a float32 weight: a median update ratio of at least ``FLOAT32_STEP`` (float32's
    machine epsilon, 1.2e-7)?

    Why: a float32 weight cannot change by less than that share of itself -- the step rounds away -- so a
    group whose typical update is below it stands still, bar the odd weight near 0. When no group moves,
    nothing was frozen: the learning rate is too small for anything to move (an outside VQ-VAE at SGD 1e-7:
    encoder and decoder at update ratios of 3e-10, the codebook's exactly 0, the loss flat --
    ``frozen_parameters`` until 2026-12-06; ``loss_plateau`` reports it)."""
    values = update_ratios.dropna().abs()
    return len(values) > 0 and float(values.median()) >= FLOAT32_STEP


def _gradient_is_zero(run, key: str) -> bool:
    """Is the group's gradient exactly 0 wherever it was logged (or is ``key`` that gradient)?

    Why it matters beside a loss that learned nothing: a group frozen by a bug -- ``requires_grad=False``,
    or left out of the optimizer -- still passes its random features on, and the rest of the model learns on
    them: the loss falls below the untrained level. Units that are *dead* -- every ReLU below zero from the
    first step (biases initialised at -3), the layer's output all zeros -- pass nothing on, get exactly no
    gradient, and the loss sits at ln K: the network is dead, and ``loss_plateau`` is the diagnosis (an
    outside PointNet, 2026-12-04: ``frozen_parameters`` until then). A group with a gradient but no update
    was left out of the optimizer, whatever the loss did: that is a freeze."""
    gradient = _gradient_key(key)
    if gradient not in run.train:
        return key.startswith("grad_norm/")
    values = run.train[gradient].dropna().abs()
    return len(values) > 0 and bool((values < ZERO).all())


def _has_gradient(run, key: str) -> bool:
    """Does the group get a gradient too small to move it? A group with no update but a gradient far below
    the other groups' -- under ``VANISH_RATIO`` of the largest group's, as the vanishing rule measures -- is
    not frozen: its updates are too small to change a float32 weight at all, and the gradient rules report
    it. A group with no update and a gradient as large as the others' *is* frozen: the optimizer never
    steps it (its parameters were left out of the optimizer's groups) -- real runs logging both per-group
    norms and update ratios, with the hidden layers left out of Adam, were called healthy or
    ``grad_explosion`` until 2026-12-02 (0 of 6 found)."""
    share, had = _gradient_share(run, key)
    return bool(had.any()) and len(share) > 0 and float(share.median()) < VANISH_RATIO


def _had_gradient(run, key: str) -> bool:
    """:func:`_has_gradient` for a group that stood still from mid-run on (:func:`_zero_since`): its gradient
    share over its last ``LAST_SHARES`` records *with* a gradient -- before the freeze -- under
    ``VANISH_RATIO`` (a ``grad_norm`` group, read as its own gradient, is judged as :func:`_has_gradient` does).

    Why not the whole run: a block frozen at step 150 of 400 (``requires_grad=False``: gradient and update
    exactly 0 from then on) had a median share of 0 -- "a gradient too small to move it" -- and was healthy
    until 2026-12-05; its last gradients were a tenth of the largest group's. A deep sigmoid stack's layers
    fade to float32's 0 instead: their last gradients before it are 1e-4 of the head's and less."""
    if key.startswith("grad_norm/"):
        return _has_gradient(run, key)
    share, had = _gradient_share(run, key)
    share = share[had]
    return len(share) > 0 and float(share.iloc[-LAST_SHARES:].median()) < VANISH_RATIO


def _gradient_share(run, key: str) -> tuple[pd.Series, pd.Series]:
    """Record by record, the gradient norm of ``key``'s group over the largest group's (records where it
    cannot be read left out), and whether the group had a gradient there at all (above ``ZERO``); both
    empty when the group's gradient is not logged."""
    gradient = _gradient_key(key)
    if gradient not in run.train:
        return pd.Series(dtype=float), pd.Series(dtype=bool)
    own = run.train[gradient].abs()
    largest = run.train[group_keys(run.train, "grad_norm")].abs().max(axis=1)
    share = (own / largest).replace([np.inf, -np.inf], np.nan).dropna()
    return share, own.loc[share.index] > ZERO


def _finding(score, step, evidence) -> Finding:
    return Finding("frozen_parameters", score, step, evidence,
                   fix="set requires_grad=True on the frozen parameters and build the optimizer from all of "
                       "model.parameters() after that; if the freeze is intended, ignore this finding",
                   experiment="list [n for n, p in model.named_parameters() if not p.requires_grad] and check "
                              "update_ratio per group after one step",
                   lesson=LESSON)
