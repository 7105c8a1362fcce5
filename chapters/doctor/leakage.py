"""``leakage``: the validation loss is far below the data's loss floor.

Statistic: the rolling median (3 evaluations) of ``val_loss``, against ``loss_floor`` from ``run_start``;
the evaluations' own noise is the robust scale of eval-to-eval differences around their trend over the second
half of the evaluations (:func:`signals.jitter_scale`: the first half still carries the descent, and a val
loss still falling through the floor is no noise -- :func:`signals.noise_scale` until 2026-12-05, which read
an LSTM forecaster's leak, 1.49 -> 0.04 against a floor of 0.73, as noise of 0.2 per evaluation). Threshold:
below the floor by more than ``LEAK_UNITS`` (3) x that noise and by at least ``MIN_BELOW`` (8 %) of the floor, for
``STEADY`` evaluations in a row (half of them, at least two, when fewer than six were made: until 2026-12-03
all of them, so a ViT evaluated four times, 0.62 -> 0.60 -> 0.55 -> 0.56 against a floor of 0.64 with a
label stamp on a fifth of its images, was healthy -- its first evaluations were still the descent). A
healthy run cannot be below the floor at all, so three noise scales three times in a row are enough.
Why: the floor is the expected loss of the perfect predictor, which no honest model beats on unseen
data; only a model that reads what it should predict -- a missing causal mask, labels copied into the
inputs -- gets there. Below the floor by
more than the measurement's noise, again and again, is the evidence; the 8 % covers what the noise cannot
show: a fixed validation set's own sampling offset (its loss differs from the expectation by a constant,
about sd(loss) / sqrt(examples): for a regression's squared error sqrt(2 / N) of the floor, 6 % with 512
examples -- a healthy linear regression in the benchmark measured 5 % below its floor). The log does not
say N, so a leak smaller than that cannot be told from a small validation set.
A second statistic is for a *noisy* validation loss (a few random batches per evaluation): each evaluation
then jumps by 5-8 %, and three in a row, three jumps below the floor, is luck -- a leak 10-14 % below
goes unseen. But the median of the second half's n evaluations is known to within ``MEDIAN_ERROR`` x
noise / sqrt(n) (the standard error of a median): below the floor by ``MIN_BELOW`` plus ``LEAK_UNITS``
standard errors is the same evidence, measured on the level instead of on single evaluations (constructed
runs 14 % below with 8 % jumps, 80 evaluations: 4 of 10 found by the first statistic, 10 of 10 by this
one; none at the floor; no cached benchmark log changed, 2026-12-02).
Train loss alone is not used: memorising a small training set also goes below the floor (that is
overfitting, not leakage). But it must agree (:func:`train_agrees`) -- unless the val loss's last two
evaluations sit under half the floor, where no validation set's luck reaches (:func:`far_below`): the
training loss of the same stretch (the second half of the evaluations) has a mean below the floor too, by
more than its standard error (a median until 2026-12-05). Why: the floor bounds the loss on
*any* fresh sample of the data, and a model that beats it by reading its targets reads them in the training
batches as well -- in every leak of the benchmark whose val loss went below the floor, the train loss was
below it too (0.16-0.89 x), and so it was in transformers with dropout 0 / 0.1 / 0.2 (dropout keeps the
train loss, measured in train mode, up) fed the label through a blurred feature of graded strength
(``bench/leak_with_dropout.py``, 24 runs): all 9 runs named had the train loss below the floor too
(0.49-0.96 x), and no run had its val loss 8 % below the floor with the train loss above it. A
validation set that beats the floor by the luck of its draw does so alone: the train loss, measured on
ever-new batches, stays at or above the floor. Such luck is common: 512-600 examples with
10-20 % noisy labels put a val loss 10-25 % off the floor either way (a GRU on random walks: 24 % below on
four healthy runs sharing one validation set, train 1-4 % above; MLPs with BatchNorm: 9 % below, train 3 %
above), and all of those were called leakage until 2026-12-02. A log without a train loss is judged on its
val loss alone. The price: a leak whose train loss stays on the floor while only the val loss goes below is
not named -- ``bench/doctor_shapes.py`` constructs its leaks so (train converging on the floor, val 10-15 %
below it) and names 10 of 60 now (60 before); no real training run in the benchmarks leaked that way.
A third statistic is for a *small* leak, 5-8 % below the floor, that the val loss alone cannot tell from a
lucky validation set, and for a run evaluated once: the val loss *and* the training loss both beat the
floor (:func:`both_below`; and over the final stretch alone, :func:`final_stretch`, for a leak the model
learned to read late). Statistic: where the val loss ended (median of the second half's last three
evaluations: a val loss still falling there has a median above its end) and the *mean* training loss over
the second half. Threshold: both below the floor by ``JOINT_BELOW`` (5 %), the training mean by
``LEAK_UNITS`` standard errors more, and the training mean at least ``SAME_SIDE`` (0.7) x the val median.
Why the training loss can carry the evidence: it is measured on ever-new batches, dozens to hundreds of
them, so its mean knows the model's true loss to a standard error of a percent or two -- no lucky draw of
one fixed set -- and the floor bounds that expectation. Why the mean and not the median: a batch's loss is
skewed (a few mislabelled examples cost ten times the rest), so with small batches the *typical* batch
sits below the floor in a healthy run (batches of 16 at 10 % label noise: the median batch 28 % below the
floor; the mean is on it). Why a model that beats the floor on its training batches is not simply
memorising: memorising opens a gap -- the val loss stays up while the training loss falls -- and a leak
does not, because the same target reaches the inputs of both (in the three outside sets the leaks' train
mean was 0.77-1.0 x their val median; a GRU memorising its noisy labels, 0.4 x, beside a validation set
that was 17 % below the floor by luck). Outside runs leaking 6-12 % below the floor that this statistic
adds: a Poisson MLP with the target on 38 % of its rows, transformers with the next token joined into a
fifth of their inputs, an LSTM with label tags, a hand-written MLP fed a noisy copy of its target
(2026-12-03); no healthy run of ~600 cached logs with a floor -- among them the linear regressions 5 %
below their floor with the train loss on it -- is named by it.
Needs a floor: without one the rule stays silent rather than guess. A negative floor (a log density's) reaches
this rule moved above 0 with the losses (:mod:`chapters.doctor.log_density`); until 2026-12-05 it was read in
nats here, every evaluation of the second half ln 2 under it -- the moved scale names the same leaks (an
outside survival model fed its log-time, a heteroscedastic MLP fed its target plus noise).

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01): leakage
13/18 top-1 (the misses: leaks the model never learned to use, val above the floor); all labels 218/243,
1/90 false alarms (docs/doctor.md).
"""

from __future__ import annotations

import math

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import MEDIAN_ERROR, curve, first_sustained, jitter_scale, noise_scale, smooth

MIN_BELOW = 0.08
STEADY = 3
LEAK_UNITS = 3.0  # three evaluations in a row, each 3 noise scales below: ~1e-8 by chance
MIN_LATE = 4  # evaluations in the second half before their median says anything
JOINT_BELOW = 0.05  # both losses this far below the floor: the small leak (both_below)
SAME_SIDE = 0.7  # the train mean at least this share of the val median: no memorising gap between them
MIN_TRAIN = 8  # training records in the second half before their mean says anything
FAR_BELOW = 0.5  # x the floor: no validation set's luck goes this low (far_below)
FEW_TRAIN = 3  # ... so beside a last evaluation that low, this many training records may confirm it (final_stretch)
LESSON = "docs/doctor.md#leakage"


def check(run) -> list[Finding]:
    floor = run.info("loss_floor")
    val = curve(run.evals, "val_loss")
    if floor is None or len(val) < 1:
        return []
    if floor <= 0:
        return []  # a floor of 0 leaves no room below it (a negative one was moved above 0: log_density)
    smoothed = smooth(val, 3)
    late = val.iloc[len(val) // 2:]  # the second half: near the final level, not the descent
    if len(val) < 2:
        return both_below(run, floor, late)  # one evaluation: no noise of its own, the train loss must say it
    if not train_agrees(run, floor, int(late.index[0])) and not far_below(floor, late):
        return final_stretch(run, floor, val)
    noise = jitter_scale(late)  # around the trend: a val loss still falling through the floor is no noise
    margin = max(MIN_BELOW * floor, LEAK_UNITS * noise)
    limit = floor - margin
    # With few evaluations the first half is the descent: 3 of 4 below would ask the leak to be there from
    # the second evaluation on. The second half's evaluations, at least two, are the level the run reached.
    step = first_sustained(smoothed < limit, min(STEADY, max(2, len(val) // 2)))
    if step is not None:
        best = float(smoothed.min())
        return [_finding(step, confidence(0.85, (floor - best) / margin),
                         f"val loss reached {best:.4g}, {1 - best / floor:.0%} below the loss floor {floor:.4g}, "
                         f"and stayed below {limit:.4g} (the floor minus {margin / floor:.0%}: more than the "
                         f"evaluations' own noise {noise:.2g}) from step {int(step)}")]
    if len(late) >= MIN_LATE:
        level = float(late.median())
        error = MEDIAN_ERROR * noise / math.sqrt(len(late))
        limit = floor * (1 - MIN_BELOW) - LEAK_UNITS * error
        if level < limit:
            return [_finding(int(late.index[0]), confidence(0.85, (floor - level) / (floor - limit)),
                             f"over the last {len(late)} evaluations the val loss's median {level:.4g} is "
                             f"{1 - level / floor:.0%} below the loss floor {floor:.4g}: below {limit:.4g} (the "
                             f"floor minus {MIN_BELOW:.0%} and {LEAK_UNITS:g} standard errors of that median, "
                             f"{error:.2g}; each evaluation alone jumps by {noise:.2g})")]
    return both_below(run, floor, late) or final_stretch(run, floor, val)


def both_below(run, floor: float, evaluations, since: int | None = None, least: int = MIN_TRAIN) -> list[Finding]:
    """The small leak: where the val loss ended (the median of the last three of ``evaluations``) and the
    training loss's mean from step ``since`` on are both below the floor by ``JOINT_BELOW``, the mean by
    ``LEAK_UNITS`` standard errors more (over at least ``least`` records), and without the gap memorising
    opens (train mean at least ``SAME_SIDE`` x the val loss). ``since`` defaults to the second half: the
    evaluations' -- or the run's, when it starts earlier (one evaluation at the very end leaves no training
    after it)."""
    train = run.curve("train_loss")
    if len(train) < 2 * least:  # twice what must come after ``since``: a run long enough to have a before
        return []
    if since is None:
        since = min(int(evaluations.index[0]), int(train.index[len(train) // 2]))
    train = train[train.index >= since]
    if len(train) < least:
        return []
    level, mean = float(evaluations.iloc[-3:].median()), float(train.mean())
    error = noise_scale(train) / math.sqrt(len(train))
    limit = floor * (1 - JOINT_BELOW)
    if level >= limit or mean >= limit - LEAK_UNITS * error or mean < SAME_SIDE * level:
        return []
    return [_finding(int(evaluations.index[0]), confidence(0.8, (floor - level) / (floor - limit)),
                     f"the val loss ended at {level:.4g}, {1 - level / floor:.0%} below the loss floor "
                     f"{floor:.4g}, and the training loss's mean {mean:.4g} from step {since} on "
                     f"({1 - mean / floor:.0%} below, {len(train)} records) beat it too: the model predicts "
                     f"better than the data allows on both")]


def final_stretch(run, floor: float, val) -> list[Finding]:
    """:func:`both_below` on the last evaluation and the training since the one before it.

    Why: a model may learn to read a leaked feature late -- a transformer tagger given a noisy copy of its
    tag on a sixth of its positions found it in its last 150 steps, val 0.86 -> 0.80 -> 0.54 -> 0.52 against
    a floor of 0.56, train 0.82 -> 0.47 with it: the second half's train loss was mostly from before (its
    median above the floor), so the run was healthy until 2026-12-03. Where the run ended is the evidence.
    A last evaluation under ``FAR_BELOW`` x the floor, beyond any lucky draw (:func:`far_below`), needs only
    ``FEW_TRAIN`` training records after the evaluation before it to confirm it, not ``MIN_TRAIN``: a U-Net
    given its mask as an input channel, evaluated four times, ended at 0.12 against a floor of 0.42 with
    six training records since its third evaluation, all under the floor (healthy until 2026-12-07). The run
    as a whole then needs twice that many training records, not twice ``MIN_TRAIN``: a FixMatch head
    memorising a validation set drawn from its labelled pool logged fifteen in all, ended at 0.27 against a
    floor of 0.72 with its last three under it, and was healthy until a second 2026-12-07 change."""
    if len(val) < 2:
        return []
    least = FEW_TRAIN if float(val.iloc[-1]) < FAR_BELOW * floor else MIN_TRAIN
    return both_below(run, floor, val.iloc[-1:], int(val.index[-2]), least)


def train_agrees(run, floor: float, since: int) -> bool:
    """Is the training loss from step ``since`` on below the floor too -- its *mean* by more than one standard
    error of that mean? True when the log has no training loss there: then the val loss is all the evidence
    there is.

    Why the mean, as in :func:`both_below`: a batch's loss is skewed, so the typical batch of a healthy run
    sits below the floor while the mean sits on it. Why a standard error below: a healthy run that has
    converged hovers *on* the floor, its mean a hair above or below it by chance -- beside a floor estimated a
    little too high, or a lucky validation set, that hair made leakage (an outside BiLSTM tagger, train mean
    0.2351 and median 0.2318 against a floor of 0.2323, val 13 % below: ``leakage`` at 0.88 until 2026-12-05,
    on a healthy run and on one whose fault was its throughput). A model that reads its targets beats the
    floor on its training batches by far more (0.16-0.96 x it in every leak the benchmarks and the outside
    sets hold)."""
    train = run.curve("train_loss")
    train = train[train.index >= since]
    if train.empty:
        return True
    error = noise_scale(train) / math.sqrt(len(train))
    return float(train.mean()) < floor - error


def far_below(floor: float, late) -> bool:
    """Are the last two evaluations (of ``late``, the second half's) below ``FAR_BELOW`` x the floor?

    Then the val loss is trusted without the training loss's agreement (:func:`train_agrees`). Why: a lucky
    validation draw is off the floor by its sampling error, about sd(loss) / sqrt(N) -- 10-25 % on the
    benchmark's and outside sets' healthy runs with 512-600 examples -- and under half the floor would need
    a validation set of a dozen examples. A training loss can stay above the floor for reasons of its own:
    a Bayesian network's ELBO adds the KL divergence of its weights to the data's loss (an outside
    mean-field MLP with a one-hot label column left in its features: val 0.0003-0.003 against a floor of
    0.146, train 0.57-0.94 -- healthy until 2026-12-05); dropout keeps it up; a train loss averaged over a
    window that began before the leak was found. Why the last two and not the whole second half (until
    2026-12-05): luck is the same at every evaluation of a fixed validation set, while a leak deepens as the
    model learns the leaked examples -- an outside GRU whose validation strings were copied six times into
    its training set went 0.74, 0.60, 0.47, 0.36, 0.29 against a floor of 0.82, its train loss held near the
    floor by the other 80 % of its data (``throughput_drop`` until then); two evaluations, so that one
    glitch is not the evidence."""
    return len(late) >= 2 and bool((late.iloc[-2:] < FAR_BELOW * floor).all())


def _finding(step, score, evidence) -> Finding:
    return Finding("leakage", score, int(step), evidence,
                   fix="make sure the model cannot see its targets: causal attention mask, labels shifted "
                       "against inputs, no label-derived feature in the inputs, no train/val overlap",
                   experiment="gradient-dependency check: the loss at position t must not change when tokens "
                              "after t are changed",
                   lesson=LESSON)
