"""``overfitting``: validation loss turns up while training loss keeps falling.

Statistic: Prechelt's *generalization loss* GL = val / min(val so far) - 1, the minimum taken over a
rolling median of three evaluations ("Early stopping -- but
when?", 1998), on the last evaluations (median of the last three after the minimum), together with the
train loss over the same stretch. Threshold: GL above ``MIN_RISE`` (10 %; Prechelt's stopping criteria use
GL of a few percent, we ask for more to stay quiet on noisy evaluations) *and* above ``RISE_UNITS`` (3)
evaluation noise scales (:func:`signals.jitter_scale` of log val_loss: the evaluation-to-evaluation jumps
around their steady trend -- until 2026-12-03 :func:`signals.noise_scale`, which reads a val loss climbing
steadily as noise: an independent GRU seq2seq evaluated four times, val 1.73 -> 2.52 -> 2.87 -> 3.08 while
train fell to 0.007, had "noise" of 13 % per evaluation and was healthy), at least two evaluations after the
minimum, and train loss not higher than at the minimum -- at the end, and with no climb in between (its
rolling median never rises above its own running minimum by more than ``reference.RISE - 1`` times the
span it can fall, :func:`learned_span`: half of what the run had learned and more, given back -- unless
that climb came after the val loss had turned up and the run came back from it, :func:`_climb_came_after`).
Why both:
val rising with train rising is divergence; val rising while train falls is the model memorising its
training set. Why in between too: a
run thrown out by a learning rate too high and brought back by a decaying schedule ends with train low
again and val still high -- the val rise came with a train rise, which memorising never shows. Why in
noise units too: a validation loss measured on a few random batches is as noisy as training (+-10 % per
evaluation is common), and the minimum of many noisy evaluations is a lucky one -- over a hundred
evaluations the lowest median of three lies about 1.7 noise scales below the truth, and the last median of
three can lie 1.3 above it by chance: 3 scales together. A fixed validation set (noise under 1 %) keeps the
10 %. And a train loss that did not fall at all since the minimum must leave a gap (val at least ``NO_GAP``
x train at the end): memorising opens one; a network knocked dead brings both back to ln K together (a
character CNN logged once an epoch, val 0.66 -> 1.61 and train 1.60 -> 1.61 was ``overfitting`` until
2026-12-03). And GL must hold at the last two evaluations themselves as well: Prechelt's criterion is
read at the current epoch, and the median of the last three is only a guard against one lucky high one --
with two evaluations after the minimum that median is their mean, and one high last evaluation carries it
(a healthy ResNet: 0.216, 0.221, 0.213, 0.213, then 0.298 -- ``overfitting`` until 2026-12-05; the last
evaluation alone until then). With five
evaluations on random episodes (0.205, 0.155, 0.356, 0.279, 0.174) the median of the last three was up 55 %
and the noise of four jumps too unsure to discount it, while the run ended back at its minimum (an
independent prototype network, ``overfitting`` until 2026-12-03). Nor is a val rise followed by a train loss
that went non-finite memorising: the weights were blowing up (a SqueezeNet and a BERT-lite whose learning
rates were raised 200-3,000-fold: val 1.0 -> 2,180 at the evaluation just before the NaN, their train loss
still falling -- ``overfitting`` at 0.88 beside the ``nan_loss`` until 2026-12-05).

A val loss that climbs from its minimum with a significant trend needs only GL 5 % and no noise scales, but
a gap and a train loss that learned (:func:`_climbing`).

A second statistic is for the model that memorised before its first evaluation, so that its validation loss
has no minimum to turn up from: the train loss far below the untrained level while the validation loss sits
above it (:func:`_memorised_at_once`). A third is for a run whose data declares its noise: the train loss
well under the ``loss_floor`` while the validation loss sits far above it (:func:`_beneath_the_floor`).
"""

from __future__ import annotations

import math

import numpy as np

from chapters.doctor.plateau import MIN_DROP
from chapters.doctor.reference import RISE, declared
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import (THRASH, TREND_EVALS, TREND_Z, curve, jitter_scale, noise_scale, reference_level,
                                     smooth, trend_z, window_for)

MIN_RISE = 0.1
TRENDED_RISE = 0.05  # ... or GL 5 % when the val loss climbs with a significant trend from its minimum (_climbing)
NO_GAP = 1.1  # val over train at the end below this, with train not lower than at the minimum: no memorising
RISE_UNITS = 3.0
MEMORISED = 0.5  # the train loss under half the untrained reference: it learned (_memorised_at_once)
# _beneath_the_floor: the train loss ends under half the declared loss floor while the val loss sits above
# twice it. Healthy outside runs ended their train loss at 0.63-1.0 x their floor, val at 1.04-1.23 x.
UNDER_FLOOR, OVER_FLOOR = 0.5, 2.0
# A val rise under half a percent of what an untrained model scores is no loss of anything learned, whatever
# its GL: a graph network at 99.9 % accuracy whose val loss went 0.0043 -> 0.0058 (GL 33 %, 0.1 % of ln 4)
# was ``overfitting`` until 2026-12-05, a healthy run to its author. 1 % until 2026-12-06, which also
# excused a CTC recogniser memorising 24 examples, its val climbing 0.574 -> 0.61 eval after eval (0.8 % of
# its first record's 4.4). What an untrained model scores: untrained_scale.
NEGLIGIBLE = 0.005
LESSON = "docs/doctor.md#overfitting"


def check(run) -> list[Finding]:
    val = curve(run.evals, "val_loss")
    if len(val) < 4 or run.nonfinite["val_loss"].any():
        return []
    return _turned_up(run, val) or _memorised_at_once(run, val) or _beneath_the_floor(run, val)


def _turned_up(run, val) -> list[Finding]:
    """Prechelt's generalization loss on ``val``, with the train loss's agreement (the module's statistic)."""
    # The minimum of noisy evaluations is biased low (one lucky eval); the minimum of a rolling median of
    # three much less so -- the rest is what RISE_UNITS covers.
    smoothed = smooth(val, 3)
    best_step = smoothed.idxmin()
    best = float(smoothed.min())
    after = val.loc[best_step:].iloc[1:]
    if len(after) < 2 or best <= 0:
        return []
    blown = run.all_rows["step"][run.nonfinite["train_loss"]]
    if (blown > best_step).any():
        return []  # the weights blew up after the val minimum: the val rise is the blow-up's (nan_loss)
    late = float(after.iloc[-3:].median())
    rise = late / best - 1
    noise = jitter_scale(np.log(val[val > 0]))
    clear = rise >= MIN_RISE and math.log1p(rise) >= RISE_UNITS * noise
    # The trend is counted after the evaluations that chose the minimum (its own and the next, the rolling
    # median's window): they were picked for being low, and everything after stands above them (_climbing).
    climbing = not clear and _climbing(val.loc[best_step:].iloc[2:])
    least = TRENDED_RISE if climbing else MIN_RISE
    if not (clear or (climbing and rise >= least)) or float(val.iloc[-2:].min()) < best * (1 + least):
        return []
    train = run.curve("train_loss")
    evidence = f"val loss rose {rise:.0%} from its minimum {best:.4g} at step {int(best_step)}"
    if len(train) >= 4:
        at_best = float(train[train.index <= best_step].iloc[-3:].median()) if (train.index <= best_step).any() \
            else float(train.iloc[0])
        end = float(train.iloc[-3:].median())
        between = smooth(train, window_for(len(train)))
        between = between[between.index >= best_step]
        excess = between - between.cummin()
        climb = float(excess.max()) if len(between) else 0.0
        # Train "rose too" by 2 % of its level and by a tenth of the val loss's rise in nats: a loss near 0
        # moves by more than 2 % of itself on nothing (a triplet loss at 0.006 -> 0.04, exactly 0 on many
        # batches, beside a val loss 1.1 -> 8.9: an outside set, 2026-12-06, healthy until then).
        rose = end > at_best + max(0.02 * abs(at_best), MIN_DROP * (late - best))
        if rose or (climb > (RISE - 1) * learned_span(run, train, between) and not
                    _climb_came_after(val, best_step, between, excess, noise)):
            return []  # train rose too: that is divergence, not overfitting
        if (end >= at_best or climbing) and late < NO_GAP * end:
            return []  # no gap opened: nothing memorised (a network gone dead; dropout on the train batches alone)
        # Memorising scores the examples trained on better than unseen ones: val ends *above* train. A val
        # loss ending below it measures something the train loss does not -- a KL term (a Bayes-by-backprop
        # network logs the ELBO, ten times its likelihood), dropout on the train batches alone -- and its rise
        # says nothing of memorising: five Bayesian networks of an outside set, val 0.04-0.4 x train, were
        # overfitting until 2026-12-06; on forty-eight outside sets no overfitting run ended with val below.
        if late < end:
            return []
        if climbing and end > (1 - MIN_DROP) * reference_level(run, train):
            return []  # the train loss learned next to nothing: there is nothing it could have memorised
        if late - best < NEGLIGIBLE * untrained_scale(run, train, val):
            return []  # a rise of a few thousandths of a nat: a near-perfect model a hair less sure (negligible)
        # A train loss of exactly 0 (float32 rounds a confident model's loss to 0) has no percentage to fall by.
        fell = 0 <= end <= at_best and at_best > 0
        evidence += f" while train fell {1 - end / at_best:.0%} to {end:.3g}" if fell else \
            f" while train went from {at_best:.3g} to {end:.3g}"
        if end > 1e-3:
            evidence += f" (val/train gap x{late / end:.1f})"
    return [_finding(confidence(0.75, rise / MIN_RISE), int(best_step), evidence)]


def _climb_came_after(val, best_step, smoothed_train, excess, noise: float) -> bool:
    """Was the training loss's climb (``smoothed_train`` from the val minimum on, ``excess`` its height above
    its running minimum) an episode the run came back from -- its end within ``MIN_DROP`` of where the climb
    began -- that began after the validation loss had already turned up: by ``MIN_RISE`` and ``RISE_UNITS`` of its
    ``noise``, or with a significant upward trend (:func:`_climbing`), between its minimum at ``best_step``
    and the climb's start (at least two evaluations in between)?

    Why: a train loss that climbs after the val loss has turned up did not carry it up. A wide random-feature
    classifier on 128 examples took its val loss from 1.41 to 4.6 while its train loss fell to 0.14; then one
    unstable stretch threw the train loss back to 0.9 for a few dozen steps, and it ended at 0.03 with val at
    11 (an outside set: ``oscillation`` until 2026-12-05, the train climb read as divergence). The climb
    that excuses a val rise is one the val rise came *with*: an LR thrown too high, then brought back by a
    schedule."""
    peak = excess.idxmax()
    began = smoothed_train.loc[:peak].idxmin()
    if float(smoothed_train.iloc[-1]) > (1 + MIN_DROP) * float(smoothed_train.loc[began]):
        return False  # not back where the climb began: a train loss that climbed and stayed up is divergence's
    before = val.loc[best_step:began].iloc[1:]
    if len(before) < 2:
        return False
    rise = float(before.iloc[-3:].median()) / float(val.loc[best_step]) - 1
    return rise >= MIN_RISE and (math.log1p(rise) >= RISE_UNITS * noise or _climbing(val.loc[best_step:began]))


def _climbing(val) -> bool:
    """Does the validation loss rise steadily after its minimum: an upward Mann-Kendall trend (z at least
    ``signals.TREND_Z``, the 5 % level) over at least ``signals.TREND_EVALS`` evaluations?

    When it does, the rise need only reach Prechelt's GL 5 % (``TRENDED_RISE``) and need not clear
    ``RISE_UNITS`` noise scales -- the trend test is itself the test against noise -- but a gap must have
    opened (val at least ``NO_GAP`` x train at the end) and the train loss must have learned
    (``plateau.MIN_DROP`` below the untrained reference).

    Why: the 10 % and the noise scales are there for one lucky low evaluation and one unlucky high one; a
    val loss that climbs evaluation after evaluation is no such pair. Outside runs labelled overfitting by
    their authors rose that way and were healthy until 2026-12-05: a ListNet ranker on 100 lists, val
    1.23 -> 1.37 over fourteen evaluations while train fell (GL 9 %); a mixture density network on 200
    points, val 0.21 -> 1.13 jumping 10-50 % between evaluations (GL 26 %, under three of its noise
    scales). Why the gap: MC dropout scores its train batches with dropout on and its validation without,
    so a healthy one's val sits below train and can creep up 5 % with a trend (the one healthy run of
    forty-four sets this named without the gap). Why not from the minimum itself: the minimum is chosen for
    being the lowest, so a trend test started there finds later evaluations above it on pure noise -- two
    healthy outside runs with their val loss on a few random batches, one lucky batch beside ordinary ones at
    the minimum, were ``overfitting`` until 2026-12-06; the caller counts from after the minimum's window.
    Why the learning: a constructed run thrashing around ln 1000, its train loss at 0.92 x it and its val
    jumping 30 % per evaluation, has an upward trend from its lucky minimum and memorised nothing. On the
    forty-four outside sets the two together named fourteen overfitting runs that were missed (ten of them
    visible) and no healthy run; one stalling-loader run whose val loss also climbed 7 % is now
    ``overfitting`` first, its ``throughput_drop`` after it."""
    return len(val) >= TREND_EVALS and trend_z(np.log(val[val > 0])) >= TREND_Z


def _memorised_at_once(run, val) -> list[Finding]:
    """A model that memorised its training set before its first evaluation: over the second half of the
    run the training loss's median is under ``MEMORISED`` (half) of the untrained reference
    (:func:`signals.reference_level`: ln K when declared) while the validation loss's median is *above*
    that reference -- and calm there (per-evaluation scale under ``signals.THRASH``), with no non-finite
    training loss.

    Why: Prechelt's test needs a validation minimum to rise from, and a model with a hundred times the
    capacity its eighty examples need learns them by heart in its first few dozen steps, so every evaluation
    finds it already confidently wrong on unseen data: an outside ArcFace classifier, train 7.0 -> 0.0003,
    val 5.31 at its first evaluation and 5.22-5.29 ever after against ln 10 = 2.30 (healthy until 2026-12-05).
    Scoring unseen data worse than a model that knows nothing, while the training batches say it learned
    more than half of all there is, is memorising: on 32 outside sets every run that did both and showed
    its fault was an overfitting run, or a no-shuffle or NaN run whose rule comes first. Why calm: a validation loss
    that jumps by 10 % and more between evaluations is thrashing -- a linear classifier at a learning rate
    far too high separates each batch in turn (train 0, val 7 against 0.4): ``oscillation``."""
    train = run.curve("train_loss")
    late = val.iloc[len(val) // 2:]
    if len(train) < 8 or len(late) < 2 or run.nonfinite["train_loss"].any():
        return []
    reference = reference_level(run, train)
    trained, unseen = float(train.iloc[len(train) // 2:].median()), float(late.median())
    if reference <= 0 or trained >= MEMORISED * reference or unseen <= reference or \
            noise_scale(np.log(late[late > 0])) >= THRASH:
        return []
    return [_finding(confidence(0.75, unseen / reference), int(late.index[0]),
                     f"over the second half the train loss's median is {trained:.3g} while the val loss's is "
                     f"{unseen:.4g}, above what an untrained model scores ({reference:.4g}): the model learned "
                     "its training examples by heart and is confidently wrong on unseen ones")]


def _beneath_the_floor(run, val) -> list[Finding]:
    """With a declared ``loss_floor`` above 0: the train loss's last tenth (median, three records at least)
    under ``UNDER_FLOOR`` (half) of the floor, while the validation loss's second half (median) is above
    ``OVER_FLOOR`` (twice) the floor, with no non-finite training loss.

    Why: the floor is the noise in the data -- the least loss any model can score on examples it has not
    seen. A train loss far under it scores the training examples better than their noise allows, which
    only learning that noise by heart can do; the validation loss, far above the floor, pays for it. Why
    here and not in Prechelt's test: a model that memorises a tiny training set in its first few hundred
    steps leaves its validation loss flat, with no minimum to turn up from -- outside VQ-VAEs trained on
    48-64 examples (train 0.03-0.04 against a floor of 0.09, val 0.34-0.45, flat) and a seq2seq model on a
    handful of pairs were ``healthy`` until 2026-12-07. Why both bars: the healthy runs of the outside
    sets that declared a floor ended their train loss at 0.63 x it and above (a floor estimated a little
    high, batch noise) and their val loss at 1.23 x it and below; a leak puts the val loss *under* the
    floor (``leakage``)."""
    train, floor = run.curve("train_loss"), run.info("loss_floor")
    late = val.iloc[len(val) // 2:]
    if floor is None or floor <= 0 or len(train) < 8 or len(late) < 2 or run.nonfinite["train_loss"].any():
        return []
    trained = float(train.iloc[-max(3, len(train) // 10):].median())
    unseen = float(late.median())
    if trained >= UNDER_FLOOR * floor or unseen <= OVER_FLOOR * floor:
        return []
    return [_finding(confidence(0.7, unseen / (OVER_FLOOR * floor)), int(late.index[0]),
                     f"the train loss ends at {trained:.3g}, under half the loss floor {floor:.4g}, while the val "
                     f"loss sits at {unseen:.4g}: the model learned the noise of its training examples by heart, "
                     "which no unseen example rewards")]


def untrained_scale(run, train, val) -> float:
    """What an untrained model scores, the yardstick of a negligible rise: ln K when ``run_start`` declares it
    (:func:`signals.reference_level`), else the lower of the train loss's first record and the first
    evaluation.

    Why the first evaluation without ln K: a first record is one batch of whatever the initialisation
    gives, and a regression initialised far too large starts at 1,260 -- a MAML learner memorising four
    tasks, val 6.5 -> 9.2 after a first evaluation of 395, rose 0.2 % of that and was "negligible" (two
    outside runs, healthy until 2026-12-07). ln K, where declared, is the untrained loss by definition."""
    reference = reference_level(run, train)
    return reference if declared(run) else min(reference, float(val.iloc[0]))


def _finding(score, step, evidence) -> Finding:
    return Finding("overfitting", score, step, evidence,
                   fix="more data or augmentation, dropout 0.1-0.2, weight decay ~0.1, early stopping that "
                       "restores the best checkpoint",
                   experiment="re-run with dropout and weight decay: the val minimum should be lower and later",
                   lesson=LESSON)


def learned_span(run, train, smoothed_train) -> float:
    """How far the training loss can fall, the yardstick for "gave back what it had learned": from the
    untrained reference (:func:`signals.reference_level`) to 0 -- or to the lowest the smoothed train loss
    went, when that is below 0.

    Why below 0: a negative log-likelihood of a *continuous* target (a Gaussian or mixture density
    output) is a log density, and a model that predicts a narrow variance scores below 0 -- and keeps
    falling the more it memorises. A regressor whose train NLL went from 1.2 to -2.3 while its val NLL
    rose from 4 to 180 learned 3.5 nats; a train spike of 1 nat on the way is noise of a variance head on
    small batches, not the run thrown back (two outside heteroscedastic MLPs on 120-150 examples were
    healthy until 2026-12-05: the span was taken as 1.2, from the reference to 0)."""
    lowest = float(smoothed_train.min()) if len(smoothed_train) else 0.0
    return reference_level(run, train) - min(0.0, lowest)
