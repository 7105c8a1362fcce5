"""``oscillation``: the loss swings widely instead of falling smoothly.

Statistic: in the second half of the run, the residual of log(train loss) around its rolling median
(``r``), summarised by its typical size (median ``|r|``, the *swing*) and by how regular it is (the lag-1
autocorrelation of ``r``). Threshold: swing above ``SWING``, and the autocorrelation below what the
same residuals in 20 random orders give, by at least ``MIN_ACF`` under their median and by 3 standard errors
(3 / sqrt(n): an autocorrelation of 15 points wanders by 0.26 by chance) (:func:`shuffled_acf`).
Why both: small batches make every record noisy, but that noise is independent from one record to the
next -- which after a short rolling median does *not* read as an autocorrelation of 0 (about -0.4: until
2026-12-01 a fixed threshold on it called every heavily noisy small-batch run oscillating), hence the
comparison with the shuffled residuals, a permutation test. A learning rate too high for the curvature
makes the loss bounce between the walls of a valley -- up, down, up: strongly negative autocorrelation.
Not positive: momentum (SGD's, or Adam's first moment) averages the gradient noise over 1 / (1 - beta)
steps, so the weights wander slowly and a run logged more often than that -- every 5 steps at momentum 0.9
-- swings in long, smooth surges, positively autocorrelated, while it learns as it should (an outside
mixture density network at batch 8: +0.38, against +0.01 shuffled; ``oscillation`` until 2026-12-04, and
the positive side named no other run first on fourteen outside sets and the families).

A second statistic catches the one big swing: the smoothed loss (rolling median, as for ``divergence``)
stays at or above ``BOUNCE`` x the untrained reference (:func:`signals.reference_level`; more on a noisy
run, in ``NOISE_UNITS`` of the comparison's noise, :func:`reference.log_noise`) for a few records, and
the run *ends* below ``FELL_BACK`` x the reference (or below ``reference.RISE`` x, the level a rise
must reach, while still swinging: :func:`fell_back`). Why: healthy runs never climb above their
starting loss (at most 1.11x in the benchmark, the first records' noise); a learning rate too high for the
batch throws the weights out of the
valley (the loss jumps to 1.4-2x its start in the course's oscillation scenario) and they fall back in and
bounce on. A run that goes up and *stays* up is ``divergence``; so is one whose jump starts where the
logged learning rate rose several-fold (:mod:`chapters.doctor.schedule`): then the LR threw it out, and
it fell back only because a schedule brought the LR down again. So is one that had learned and ends having
given most of it back (:func:`plateau.relapse`: 80 % of its fall, to the end): thrown out of the valley it
had found, not bouncing in it -- a character LM at 0.31x ln V thrown to 5x by an LR raised 100-fold (not
logged) and settled at 0.88x, an LR schedule at 100x whose loss fell to 0.08 and ended at 1.0 (two outside
runs, both their authors' ``divergence``; ``oscillation`` until 2026-12-07). A run whose first record is
itself above the limit, and stays there, showed no jump: it started there (a loss logged in bits beside a
declared ln K starts at 1.44x it; until 2026-12-02 that was a "bounce", and so was a moving average that
begins at its first raw value -- 5 false alarms among the benchmark's relogged healthy runs). But a run thrown
out at its second record is above the limit, smoothed, from the first record on too: when the first record as
logged is below the limit and the rise is a blow-up (``BLOWUP`` x the reference, which no logging unit or
moving average's start explains), it was thrown out (residual MLPs trained with Adam at LR 0.1-1, batches
of 4-16: 5 of 36 such runs were called healthy until 2026-12-02).

A third catches thrashing for the whole run (tiny batches at a high learning rate): the log loss swings
from record to record by ``signals.THRASH`` or more (its robust per-record scale, :func:`signals.noise_scale`,
over the run after its first 5 %, and its second half not standing still: :func:`died_still`), *and* the
run does not learn -- the median loss of its second half is still at least ``STUCK`` x the untrained
reference (ln K when declared, else the median of the first 5 %:
one record of a run this noisy is no start -- but then the second half must also not be above the first
record by more than the noise allows, :func:`rose_from_first`: a loss thrown up before the second record
has first records that are all after the jump) (and at most ``CEILING`` x: above that the run has
diverged, and ``divergence`` -- which leaves thrashing runs to this rule -- reports it), and it never
learned and gave it back (:func:`plateau.relapse`: a run that did learn and was thrown back is the
divergence or the dead network those rules report), and its learning rate never jumped several-fold
(:mod:`chapters.doctor.schedule`: then the run is not one regime from start to end, and a loss that
thrashes after the jump is the LR's doing -- ``divergence``). Why both:
small-batch noise is large too, but a healthy small-batch run learns, so its loss sinks below the
reference (to 0.03-0.8 x in the benchmark); a run whose steps overshoot every time swings around where it
started. Why ``signals.THRASH`` is 10 %: a run that is stuck *because its steps are too small* stays near its
initialisation, whose predictions are near uniform, and a near-uniform prediction scores about ln K on
every example whatever its label -- so its per-batch loss barely moves (0.1-2 % per record on the
benchmark's plateaus, batches of 32). Swings of 10 % or more at an unchanged level mean the predictions are
confident and keep changing: the weights move a lot and get nowhere. That argument holds for
cross-entropy; a regression's squared error differs from batch to batch by the targets alone, so when the
log has evaluations the rule also asks the *validation* loss to move: from one evaluation to the next by
``VAL_MOVES`` (1 %) or more (robust per-evaluation scale of log val_loss, after its first quarter). A
fixed validation set has no sampling noise, so its changes are the weights' doing: a run stuck on tiny
steps moves it by at most 0.2 % per evaluation (the benchmark's plateaus), one whose steps overshoot by
several percent (its thrashing runs: 1.7-92 %).

A fourth reads the thrashing off the *validation* loss, for the runs whose train loss cannot show it: a
linear classifier at a far too high learning rate separates one batch perfectly (loss ~0) and is thrown far
off by the next, so the train loss's median says "learned"; a run whose first records already thrash has no
trustworthy start level. Statistic: over the second half of the evaluations, the robust per-evaluation
scale of log val_loss (:func:`signals.noise_scale`) and the Mann-Kendall trend score
(:func:`signals.trend_z`). Threshold: scale at least ``signals.THRASH`` (the same 10 % as for the train loss),
no downward trend (z above -``TREND_Z``, the 5 % level), and the median there still at least ``STUCK`` x
the untrained reference. Why: a fixed validation set has no sampling noise, so its jumps are the weights'
doing, and "no trend" is asked of the data with a test, not read off a fixed multiplier; the level keeps a
run whose validation loss is measured on random batches (as noisy as training, but converged far below the
untrained loss) healthy. At least ``MIN_EVALS`` (8) evaluations: four in the second half. Its confidence
starts at 0.6, below ``divergence``'s: a run thrown up *and* swinging is diverged.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01): oscillation
13/18 top-1 (9/18 before the validation statistic; all labels 218/243, 1/90 false alarms; fresh held-out set
(seed 8): all labels 83/96, 2/35; on 200 short noisy healthy logs 5 ``oscillation`` false alarms, 38 before
the permutation test; the misses: runs whose loss swings no more than small
batches explain, and runs thrown far above the untrained loss, which ``divergence`` or ``grad_explosion``
claim) (docs/doctor.md). 2026-12-02, after :func:`fell_back` took runs thrown up and back to their start:
oscillation 15/18, all labels 220/243, 1/90; fresh held-out seeds 28-29: oscillation 12/16, all labels
184/220, 3/80. Fourteenth pass, logs from code written by others (``bench/doctor_outside.py``, logs that
show their fault): sets A + B oscillation 8/9, and a noisy healthy GRU no longer called oscillation
(:func:`val_learned`); the held-out set C oscillation 0/3 (batch 1-2, train swinging, val creeping down).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chapters.doctor import signals
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.plateau import MIN_DROP, MOTIONLESS, relapse, stands_above
from chapters.doctor.reference import RISE, declared, log_noise, rise_limit, rose_past_first
from chapters.doctor.schedule import climb_start, lr_ever_raised, lr_raised
from chapters.doctor.signals import TREND_Z, first_sustained, noise_scale, reference_level, smooth, tail, window_for

SWING = 0.1
MIN_ACF = 0.3  # beyond what the same swings in random order show (shuffled_acf)
SHUFFLES = 20  # the real order beyond all 20 random orders, and by MIN_ACF beyond their median
BOUNCE = 1.3
FELL_BACK = 0.9
SETTLED = 0.05  # per-record swings of the second half under which a run that rose and fell settled (hump)
STUCK = 0.85
CEILING = 2.0  # a run swinging around more than twice the untrained loss has diverged
WILD = 0.25  # per-record scale of log-loss swings: about +-28 % from one record to the next
HALF_STUCK = 0.65  # beside such swings, a run whose train loss is still this high has not converged
VAL_MOVES = 0.01
MIN_EVALS = 8  # the second half then holds 4 evaluations: 3 differences for the scale, 6 pairs for the trend
NOISE_BALL = 1.5  # train and val loss this many times the declared floor: stuck far from what the data allows
FEW_EVALS_BALL = 2 * NOISE_BALL  # ... when three or four evaluations cannot show the val loss is not coming down
FELL_UNITS = 3.0  # a val loss that ended lower by fewer of its own evaluation-to-evaluation jumps fell by chance
LESSON = "docs/doctor.md#oscillation"
FIX = "lower the learning rate, use a larger effective batch (gradient accumulation), longer warmup"
EXPERIMENT = "re-run with half the learning rate: the swings should shrink and the loss end lower"


def fell_back(loss: pd.Series, smoothed: pd.Series, start: float) -> bool:
    """Did the run come back down by its end (median of its last tenth, smoothed): below ``FELL_BACK`` x its
    untrained reference -- or below ``RISE`` x it (no longer risen) while its second half still swings by
    ``signals.THRASH`` or more from record to record (:func:`signals.noise_scale`)?

    Why the second way: a run thrown about by a learning rate too high for its batch often falls back to
    about where it started and bounces there, getting nowhere (the benchmark's thrashing ResNets and GRUs,
    thrown to 3-650x their start, came back to 0.9-1.4x it, swinging 18-40 %); until 2026-12-02 those were
    ``divergence``. A run that came back there *smoothly* (a fine-tuning run's warm-up hump, 5 % noise) is
    not bouncing, and stays as it was judged before."""
    end = float(tail(smoothed).median())
    if end < FELL_BACK * start:
        return True
    return end < RISE * start and noise_scale(np.log(loss.iloc[len(loss) // 2:])) >= signals.THRASH


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < 16:
        return []
    reference = reference_level(run, loss)
    return bounce(run, loss, reference) or thrashing(run, loss, reference) or val_thrashing(run, loss, reference) or \
        noise_ball(run, loss, reference) or regular_swings(loss)


def bounce(run, loss: pd.Series, start: float) -> list[Finding]:
    """One big swing: up to ``BOUNCE`` x the reference, then back down by the end (:func:`fell_back`)."""
    smoothed = smooth(loss, window_for(len(loss)))
    limit = start * max(BOUNCE, signals.factor(signals.NOISE_UNITS * log_noise(run, loss)))
    step = first_sustained(smoothed >= limit, max(3, len(loss) // 50))
    # Above the limit from the first record on, the log shows no jump: the run started there (a loss
    # logged in bits beside a declared ln K starts 1.44x above it; a moving average starts at one raw value
    # and climbs to the level of the records after it). Unless the first record itself is below the limit
    # and the rise is a blow-up (BLOWUP x the reference: no unit or warm-up of a logger is off by that): a
    # run thrown out at its second record has a rolling median above the limit from the first record on.
    started_there = step == loss.index[0] and (float(loss.iloc[0]) >= limit or
                                               float(smoothed.max()) < signals.BLOWUP * start)
    if step is None or started_there or not fell_back(loss, smoothed, start) or relapse(loss, start) is not None:
        return []  # (relapse: it learned, and the jump took most of that away to the end -- thrown out, not
        # bouncing in the valley it had found; divergence or the dead network reads it)
    climb = climb_start(smoothed, step)
    if lr_raised(run, climb, window_for(len(loss)), step) or hump(loss, smoothed, climb, start):
        return []
    peak, end = float(smoothed.max()), float(tail(smoothed).median())
    return [Finding("oscillation", confidence(0.7, peak / (BOUNCE * start)), int(step),
                    f"the loss jumped from {start:.4g} to {peak:.4g} (x{peak / start:.1f} its start) from step "
                    f"{step}, then fell back to {end:.4g} by the end: the steps overshoot the valley and bounce "
                    "instead of descending (a run that stayed up would be divergence)",
                    fix=FIX, experiment=EXPERIMENT, lesson=LESSON)]


def hump(loss: pd.Series, smoothed: pd.Series, climb: int, start: float) -> bool:
    """Was the rise a hump, not a bounce: it began before the run had learned anything (the smoothed loss
    never ``MIN_DROP`` below ``start`` before ``climb``, where the climb began), and the second half of the
    run moves by less than ``SETTLED`` (5 %) from record to record (:func:`signals.noise_scale` of the log
    loss)?

    Why: a run whose steps overshoot is thrown out of the valley it found and bounces on when it falls back
    in -- the benchmark's bouncing runs swing 11-62 % per record in their second half. A loss that rises
    from its first records, before any learning, and then comes down smoothly is a term of the loss
    growing first: a VQ-VAE's commitment loss grows while the encoder outruns its codebook (three outside
    healthy runs rose to 1.5-2.6 x their first record and then settled at 1-3 % per record; ``oscillation``
    until 2026-12-05). A smooth fall after a jump *out of* a learned valley is still a bounce."""
    before = smoothed[smoothed.index < climb]
    learned_first = len(before) > 0 and float(before.min()) <= (1 - MIN_DROP) * start
    return not learned_first and noise_scale(np.log(loss.iloc[len(loss) // 2:])) < SETTLED


def thrashing(run, loss: pd.Series, reference: float) -> list[Finding]:
    """Large record-to-record swings for the whole run, and no learning: the second half still near the
    reference."""
    body, swing, level = swings(loss)
    if not declared(run):  # "where it started": the first 5 %, not one record of a run this noisy
        if rose_from_first(run, loss, level):
            return []
        reference = float(loss.iloc[:len(loss) - len(body)].median())
        if stands_above(loss, reference, swing):
            # ... unless the first record stands far above them, beyond this run's noise: then it is the
            # untrained level, and the run fell from it at once (a multi-task MLP: 2.86, then 0.55 by its
            # second record and flat about 0.5 -- converged, "stuck at 89 %" of its first records until
            # 2026-12-03)
            reference = float(loss.iloc[0])
    if swing < signals.THRASH or died_still(body) or not STUCK * reference <= level <= CEILING * reference or \
            relapse(loss, reference) or lr_ever_raised(run) or not val_moves(run) or \
            val_learned(run, min(reference, float(loss.iloc[0]))):
        return []
    return [Finding("oscillation", confidence(0.8, swing / signals.THRASH), int(body.index[0]),
                    f"the loss swings by about {np.expm1(swing):.0%} from one record to the next for the whole "
                    f"run and does not come down: the second half's median {level:.4g} is "
                    f"{level / reference:.0%} of an untrained model's {reference:.4g}",
                    fix=FIX, experiment=EXPERIMENT, lesson=LESSON)]


def died_still(body: pd.Series) -> bool:
    """Does the second half of ``body`` stand still: its typical record-to-record change of the log loss
    (:func:`signals.noise_scale`) at most ``plateau.MOTIONLESS`` (0.1 %)?

    Why :func:`thrashing` asks: its swing is measured over the whole run after the first 5 %, and a run
    thrown as high as 1e17 by SGD at 1.0 swings by 229 % a record up there -- then sits at ln K to the
    fourth decimal for its last third, every unit switched off (an outside graph attention network,
    ``oscillation`` until 2026-12-07). The robust scale reads the second half by its typical record, so
    those still records decide it. A loss that does not move at all is not swinging: the network died, and
    ``loss_plateau`` reads it (:func:`plateau.dead_network`)."""
    return noise_scale(np.log(body.iloc[len(body) // 2:])) <= MOTIONLESS


def swings(loss: pd.Series) -> tuple[pd.Series, float, float]:
    """The run after its first 5 % (at least one record), its per-record scale of log-loss swings
    (:func:`signals.noise_scale`), and its second half's median loss."""
    body = signals.after_start(loss)
    return body, noise_scale(np.log(body)), float(body.iloc[len(body) // 2:].median())


def rose_from_first(run, loss: pd.Series, level: float) -> bool:
    """Is the second half's median above the first record by more than the noise allows
    (:func:`reference.rise_limit`: ``NOISE_UNITS`` x the run's per-record noise, at least ``RISE`` x)?

    Without ``run_start``'s ln K the first record is the only level from before a jump that the first
    records already show (4.6 at the first record, 136 at the second, then 25-35: the first 5 % are all
    after the jump). A run that stays far above it has diverged, however much it swings up there. In noise
    units because the first record is one batch: on a run swinging +-50 % a lucky first batch can score a
    third of the rest, and a run that thrashes around that level has not risen. Or risen by the rank test
    (:func:`reference.rose_past_first`): nineteen records in twenty after the first above 1.5 x it -- a run
    thrashing +-100 % after a jump before its second record raises the noise-unit bar out of reach."""
    return level >= rise_limit(run, loss, float(loss.iloc[0])) or rose_past_first(run, loss)


def val_moves(run) -> bool:
    """Does the validation loss jump about by ``VAL_MOVES`` or more per evaluation? (True when too few evals.)

    The jumps are measured around the trend (:func:`signals.jitter_scale`): a slow healthy run that takes
    its fixed validation set down by a steady 1 % per evaluation is learning, not thrashing (a noisy
    small-batch encoder doing exactly that was called oscillation until 2026-12-01)."""
    val = signals.val_losses(run)
    if len(val) < 4:
        return True
    return signals.jitter_scale(np.log(val.iloc[len(val) // 4:])) >= VAL_MOVES


def val_learned(run, reference: float) -> bool:
    """Did the validation loss come down: a downward trend (Mann-Kendall z at most -``TREND_Z``, the 5 %
    level, :func:`signals.trend_z`) that took ``plateau.MIN_DROP`` (10 %) or more off it, from the median of
    its first three evaluations to the median of its last three (at least four evaluations) -- ending that
    far below the untrained ``reference`` too?

    Why: a fixed validation set that the model scores 10 % better at the end than at the start was learned,
    however wildly the training batches swing on the way -- a GRU classifier at batch 4, its train loss
    swinging 19 % per record at 0.88 x ln 7 in its second half, took its val loss from 1.87 to 1.54 over six
    evaluations (an independent set, 2026-12-02: called oscillation until then). A run whose steps overshoot
    every time gets nowhere on the validation set either. Why the trend test as well: a val loss measured on
    random batches jumps by 30 % per evaluation, and the medians of three such evaluations differ by 10 %
    a third of the time by chance (the constructed thrashing shapes: 7 of 60 lost without it). Why below the
    reference: a run thrown up before its first evaluation comes *down* from there and thrashes around its
    start (an MLP at 50x its LR: val 5.6 at the first evaluation, 1.9 for the other nineteen, its first
    record 1.86) -- a fall it made without learning anything. :func:`thrashing` passes the lower of its
    reference and the first record: the first 5 % of such a run are already thrown up (2.13 there)."""
    val = signals.val_losses(run)
    if len(val) < 4 or signals.trend_z(np.log(val)) > -TREND_Z:
        return False
    end = float(val.iloc[-3:].median())
    return end <= (1 - MIN_DROP) * min(float(val.iloc[:3].median()), reference)


def val_thrashing(run, loss: pd.Series, reference: float) -> list[Finding]:
    """The validation loss jumps by ``signals.THRASH`` or more from one evaluation to the next over the second
    half of the evaluations, with no downward trend there (Mann-Kendall, :func:`signals.trend_z` > -1.96) and no
    climb (:func:`climbed`), and its median there still at least ``STUCK`` x the untrained reference (the run
    did not learn) -- or the training loss thrashes wildly beside it (:func:`wild_and_stuck`)."""
    val = signals.val_losses(run)
    if len(val) < MIN_EVALS or rose_past_first(run, loss):
        return []  # too few evaluations; or thrown up at once and thrashing up there: divergence
    late = np.log(val.iloc[len(val) // 2:])
    swing, trend = noise_scale(late), signals.trend_z(late)
    level = float(np.exp(late.median()))
    if swing < signals.THRASH or trend <= -TREND_Z or climbed(val, trend) or (level < STUCK * reference and
                                                   not wild_and_stuck(run, loss, reference)) or \
            train_learned_beside(loss, level, reference):
        return []
    return [Finding("oscillation", confidence(0.6, swing / signals.THRASH), int(late.index[0]),
                    f"over the second half of the evaluations the validation loss jumps by about "
                    f"{np.expm1(swing):.0%} from one evaluation to the next, and does not come down (trend "
                    f"z = {trend:+.1f}), its median {level:.4g} is {level / reference:.0%} of an untrained model's "
                    f"{reference:.4g}: the weights move a lot and get nowhere",
                    fix=FIX, experiment=EXPERIMENT, lesson=LESSON)]


def climbed(val: pd.Series, late_trend: float) -> bool:
    """Did the validation loss climb: an upward trend over the second half of the evaluations (Mann-Kendall z
    ``late_trend`` at least ``TREND_Z``) and its last three (median) at ``RISE`` x its first evaluation or more?

    Why :func:`val_thrashing` leaves such a run alone: jumps about a level that goes nowhere are the weights
    thrown about; jumps along a climb are a climb -- the weights carried away (``divergence``, whose
    :func:`divergence.both_rose` reads that climb) or a model memorising its training set (``overfitting``,
    the train loss falling beside it). An outside metric-learning run whose learning rate was ramped 46-fold
    saw its val loss climb 0.27 -> 4.3 (z = +2.4 over the second half) with 150 % jumps between evaluations:
    ``oscillation`` above its ``divergence`` until 2026-12-06. Both conditions, because six evaluations of a
    val loss jumping about a flat level pass the trend test alone one time in forty."""
    return late_trend >= TREND_Z and float(val.iloc[-3:].median()) >= RISE * float(val.iloc[0])


def train_learned_beside(loss: pd.Series, val_level: float, reference: float) -> bool:
    """Did the training loss come down -- still trending down over its second half (Mann-Kendall z at most
    -``TREND_Z``, the 5 % level), its last fifth (median) ``plateau.MIN_DROP`` below the untrained
    ``reference`` -- with the validation loss's level (``val_level``, the median of its second half) within
    ``RISE`` x of that last fifth? The second half, as for the validation loss: a run that fell in its first
    records and then thrashed has a trend over the whole run and none where the thrashing is.

    Why: :func:`val_thrashing` reads "the weights move a lot and get nowhere" off a validation loss that
    jumps about with no trend. A validation loss measured on a few random batches jumps about by itself; when
    the training loss beside it went steadily down, to where the validation loss sits, the model did get
    somewhere, and the jumps are the measurement's (an outside point-cloud classifier at batch 3: train
    1.60 -> 1.40 in steady steps, val on random batches 1.38-1.62, ``oscillation`` until 2026-12-06). A
    model whose steps overshoot cannot carry the training loss down a trend; one that fits each batch and is
    thrown off by the next (a linear classifier far above its learning rate: train near 0) leaves the
    validation loss far above the training loss, beyond ``RISE`` x."""
    positive = loss[loss > 0]
    end = float(tail(positive, 0.2).median())
    return signals.trend_z(np.log(positive.iloc[len(positive) // 2:])) <= -TREND_Z and \
        end <= (1 - MIN_DROP) * reference and val_level <= RISE * end


def wild_and_stuck(run, loss: pd.Series, reference: float) -> bool:
    """Does the training loss swing by ``WILD`` or more from record to record (:func:`signals.noise_scale` of
    the log loss after the first 5 %) while its second half's median stays between ``HALF_STUCK`` and
    ``CEILING`` x the untrained reference (ln K when declared, else the first 5 %'s median)?

    Why: :func:`val_thrashing` asks a validation loss that jumps about with no trend to sit near the
    untrained level, so that a val loss measured on random batches -- noisy, but converged far below the
    start -- stays healthy. A run at a learning rate too high for batches of two can thrash at 0.65-0.85 x
    its start (an independent ResNet at batch 2, SGD 0.3: train swinging +-65 % per record at 0.75 x, val
    1.14 <-> 1.91 between evaluations with no trend; 2026-12-03). Such a run has not converged: a healthy
    run noisy enough to swing 28 % per record ends far lower (0.03-0.55 x in the benchmarks), and on
    1,200 cached healthy logs (families, constructed shapes, two independent sets) none passes both."""
    body, swing, level = swings(loss)
    start = reference if declared(run) else float(loss.iloc[:len(loss) - len(body)].median())
    return swing >= WILD and HALF_STUCK * start <= level <= CEILING * start


def noise_ball(run, loss: pd.Series, reference: float) -> list[Finding]:
    """With a declared ``loss_floor``: the training loss swings by ``signals.THRASH`` or more from record to
    record -- or the validation loss jumps by that much from one evaluation to the next (around its trend,
    :func:`signals.jitter_scale`, after its first quarter, at least ``signals.TREND_EVALS`` evaluations) --
    and both its second half's median and the validation loss's (over the second half of at least three
    evaluations) sit at ``NOISE_BALL`` (1.5) x the floor or more (``FEW_EVALS_BALL``, 3 x, with fewer than
    ``signals.TREND_EVALS`` evaluations), the validation loss neither trending down (Mann-Kendall z above
    -``TREND_Z``) nor ending ``MIN_DROP`` below its first evaluation by more than ``FELL_UNITS`` (3) of its
    own evaluation-to-evaluation jumps around their trend (:func:`signals.jitter_scale`: three evaluations
    falling 30 % each are a steady descent, with no jitter at all) -- and the run did not diverge (at most
    ``CEILING`` x the untrained reference; the learning rate never jumped).

    Why: stochastic gradient descent at a constant learning rate does not settle at the minimum but in a
    ball around it whose excess loss grows with the learning rate and with the gradient noise of a batch
    (Mandt, Hoffman & Blei, 2017, "Stochastic gradient descent as approximate Bayesian inference"). Tiny
    batches at a high rate make that ball so wide that the loss swings about far above what the data
    allows -- a tabular ResNet at batch 2, SGD 0.1, at 1.6 x its floor; a BiLSTM tagger fed one sentence a
    step at Adam 0.1, at 2.5 x, 0.7 x ln K: both healthy until 2026-12-03, the train loss too far below its
    start for :func:`thrashing`. The floor says how far the run is from done where the start cannot: on
    ~2,000 cached logs no healthy run had train *and* val 1.5 x their floor with a flat val loss (the closest:
    val 1.55 x with train on the floor, a CNN whose val loss drifted up). Why the noise units: a val loss that
    jumps 0.24 <-> 2.4 from one evaluation to the next (a denoising autoencoder at SGD 0.4, 7 x its floor,
    an outside set of 2026-12-04) ended below its first evaluation by two of its own jumps -- chance, not
    learning; a healthy run still coming down does so by far more than its evaluations jitter. Why the
    validation loss's jumps may stand in for the batches': a batch of 16-128 averages its examples' noise
    away, so the train loss can swing 5-7 % per record while the weights are thrown about -- but a fixed
    validation set has no sampling noise, and its jumps are the weights' alone (a SIREN at SGD 0.3 at 300 x
    its floor, two flows at SGD 0.1 and momentum 0.02 at 1.6 x theirs, val jumping 12-15 % per evaluation
    with no trend: healthy or ``loss_plateau`` until 2026-12-04, two outside sets). Of 239 healthy outside
    runs with a floor and five evaluations, those whose val loss jumps that much were all still coming down.
    Why twice as wide a ball (``FEW_EVALS_BALL``, 3 x the floor) with three or four evaluations: "not coming
    down" is a trend test, and no trend of four reaches the 5 % level -- so few evaluations cannot show the
    validation loss flat, and the train loss's swing alone is no evidence on a regression near its floor: a
    squared error's batch noise is about sqrt(2 / B) of it (20-30 % at batches of 24-48), whatever the steps.
    Four healthy outside rotation regressors at 1.5-2.4 x their floor, evaluated three or four times, were
    ``oscillation`` until 2026-12-07; two ConvLSTMs at SGD 1.5-3, swinging 50 % a record at 5-10 x theirs
    (evaluated three times), are."""
    floor = run.info("loss_floor")
    val = signals.val_losses(run)
    if floor is None or floor <= 0 or len(val) < 3 or lr_ever_raised(run):
        return []
    body, swing, level = swings(loss)
    late = float(val.iloc[len(val) // 2:].median())
    log_val = np.log(val)
    val_jumps = signals.jitter_scale(log_val.iloc[len(val) // 4:]) if len(val) >= signals.TREND_EVALS else 0.0
    # Too few evaluations to show the val loss is not coming down: the ball must be twice as wide.
    ball = NOISE_BALL if len(val) >= signals.TREND_EVALS else FEW_EVALS_BALL
    if max(swing, val_jumps) < signals.THRASH or level < ball * floor or late < ball * floor or \
            level > CEILING * reference:
        return []
    fell = float(log_val.iloc[0] - log_val.iloc[-1])
    if signals.trend_z(log_val) <= -TREND_Z or (fell > -math.log1p(-MIN_DROP) and (
            fell > FELL_UNITS * signals.jitter_scale(log_val) or _fell_in_order(log_val))):
        return []  # the validation loss is still coming down: learning, however noisily
    if _still_falling(loss):
        return []  # the training loss is still coming down, steadily: no ball to settle in yet
    swinging = (f"the loss swings by about {np.expm1(swing):.0%} from one record to the next" if swing >= signals.THRASH
                else f"the validation loss jumps by about {np.expm1(val_jumps):.0%} from one evaluation to the next")
    return [Finding("oscillation", confidence(0.6, min(level, late) / (NOISE_BALL * floor)), int(body.index[0]),
                    f"{swinging}, and both the training and the validation loss sit at "
                    f"{min(level, late) / floor:.1f} x the loss floor {floor:.4g} or more without coming down: the "
                    "steps are too large for the batch, and the run bounces about far above the minimum instead of "
                    "settling into it",
                    fix=FIX, experiment=EXPERIMENT, lesson=LESSON)]


def _fell_in_order(log_val: pd.Series) -> bool:
    """With fewer than ``signals.TREND_EVALS`` evaluations: is each one lower than the one before?

    Why: with three evaluations the jitter around the trend is read off two differences, and a run that
    converges as runs do -- a big first fall, a small second one -- shows them as jitter: 0.26 -> 0.133 ->
    0.120 "jumps" by 0.30 (log) about its median step, so a fall of 0.77 was not three jitters (an outside Deep Sets
    regressor at batch 16, its train loss swinging 28 % a record at 11 x a floor it could not reach, and
    another author's set regressor: ``oscillation`` until 2026-12-07). A noise ball lands in falling order
    by chance too -- one time in six for three evaluations, one in 24 for four -- which is why this counts
    only beside a fall of ``MIN_DROP``, and only where no trend test can speak; a ball's evaluations, thrown
    about by the steps, rarely fall 10 % in order (none of the balls of the outside sets did)."""
    steps = np.diff(log_val.to_numpy(dtype=float))
    return len(log_val) < signals.TREND_EVALS and bool((steps < 0).all())


def _still_falling(loss: pd.Series) -> bool:
    """Is the training loss still coming down over its second half: a downward Mann-Kendall trend (z at most
    -``signals.TREND_Z``) and its last third's median ``MIN_DROP`` below its first third's?

    Why: the noise ball is where a run *settles* -- its loss stops falling and swings about a level. A
    Bayesian network trained on the ELBO logs the KL term in its training loss, ten times its likelihood:
    that loss fell steadily to the end (12 -> 2.5 at Adam 1e-3) while the likelihood on the validation set,
    a few random batches, jumped 20-40 % per evaluation at 2.4 x its floor -- three healthy outside runs were
    ``oscillation`` until 2026-12-06. A run thrown about by its steps has no such descent left."""
    second = loss.iloc[len(loss) // 2:]
    half = np.log(second[second > 0])
    if len(half) < signals.TREND_EVALS:
        return False
    third = max(1, len(half) // 3)
    dropped = float(half.iloc[:third].median() - half.iloc[-third:].median())
    return signals.trend_z(half) <= -TREND_Z and dropped >= -math.log1p(-MIN_DROP)


def regular_swings(loss: pd.Series) -> list[Finding]:
    """Large swings around the trend in the second half, anti-correlated from one record to the next by more
    than independent noise would be after the same smoothing (:func:`shuffled_acf`): up, down, up."""
    log_loss = np.log(loss)
    window = window_for(len(loss), 0.05, 5)
    trend = smooth(log_loss, window)
    residual = (log_loss - trend).iloc[len(loss) // 2:]
    swing = float(residual.abs().median())
    if swing < SWING or residual.std() == 0:
        return []
    acf = float(residual.autocorr(1))
    chance = shuffled_acf(log_loss, trend, window, len(loss) // 2)
    beyond = max(MIN_ACF, 3 / math.sqrt(len(residual)))  # 3 standard errors of an autocorrelation of n points
    if not acf < chance.min() or float(np.median(chance)) - acf < beyond:
        return []  # not below every random order, or not far enough below their median: no bouncing
    return [Finding("oscillation", confidence(0.6, swing / SWING), int(residual.index[0]),
                    f"in the second half the loss swings by {np.expm1(swing):.0%} around its trend, and the "
                    f"swings are regular (lag-1 autocorrelation {acf:+.2f}; the same swings in random order "
                    f"give {float(np.median(chance)):+.2f}), not independent batch noise",
                    fix=FIX, experiment=EXPERIMENT, lesson=LESSON)]


def shuffled_acf(log_loss: pd.Series, trend: pd.Series, window: int, start: int) -> np.ndarray:
    """The lag-1 autocorrelation the residuals would have if they were independent: put them back on the
    trend in random order (``SHUFFLES`` times, a fixed seed: the doctor is deterministic), smooth again and
    measure as for the real curve (the same rolling-median ``window``). Why not compare with 0: a residual
    around a short rolling median is anti-correlated even for pure noise (a high record pulls its
    neighbours' median up: about -0.4 with a window of 5), so a fixed threshold on it flags every noisy
    small-batch run."""
    rng = np.random.default_rng(0)
    residual = (log_loss - trend).to_numpy()
    draws = []
    for _ in range(SHUFFLES):
        shuffled = pd.Series(trend.to_numpy() + rng.permutation(residual), index=log_loss.index)
        again = (shuffled - smooth(shuffled, window)).iloc[start:]
        draws.append(float(again.autocorr(1)) if again.std() > 0 else 0.0)
    return np.array(draws)
