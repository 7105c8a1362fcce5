"""``loss_plateau``: the run is not learning -- it never did, or its network died.

Never learned. Statistic: relative drop of the smoothed train loss, from the untrained reference
(:func:`signals.reference_level`: ln V / ln K when declared, else the first record -- or the smoothed
curve's first value when higher: a first record from a lucky small batch would make any run look as if it
never fell) to its best smoothed value. Threshold: less than ``MIN_DROP``, or less than ``NOISE_UNITS`` of the
smoothed curve's noise (:func:`learned`); the start is the first window's median instead when the first record
is no further above it than the run's own noise explains (:func:`opening_level`). With a known ``loss_floor``
we also accept a run that started near the floor (nothing left to learn) as healthy. Why: any working setup
cuts a random model's loss by far more than 10 % within a few hundred steps; a flat line means the updates
are too small (learning rate 100-1000x too low), the network is dead, or the labels carry no signal (a label
bug). A run whose records swing too wildly for its best to mean anything has learned when its *median*
record is that far below the reference, by ``NOISE_UNITS`` standard errors (:func:`typically_lower`).
Unless the validation loss is still coming down (:func:`val_still_falling`): then the run is learning
slowly, and its train loss is too noisy to show it. A log that starts
late (a resumed run's tail) cannot tell "stuck" from "converged" against its own first record, so it needs
a floor or a declared class count (a run still at ln K is stuck wherever its log starts). Late means a first
record at step ``LATE_START`` (50) or after: a record holds the mean loss since the one before, so a first
record at step 62 -- a flow logged once an epoch, Keras-style -- averages the whole first epoch, its steepest
descent included, and sits far below the untrained loss (its run then fell "only" 8.8 % and read as a plateau
until 2026-12-03; the rule allowed up to a tenth of the run before). At step 50 exactly, too: four healthy
outside runs logged every 50 steps -- graph autoencoders converged within their first record, a tanh MLP, a
linear state-space LM -- were ``loss_plateau`` until 2026-12-06 ("after step 50" until then); on forty-eight
outside sets no ``loss_plateau`` run was lost for it. Except a loss that does not move at all
(:func:`motionless`), which needs no start to measure from: Adam at 1e-6, logged from step 50, 0.6933 ->
0.6910 over 1,000 steps (an outside RBM; healthy until 2026-12-07).

Died. Statistic (:func:`relapse`, then :func:`dead_network`): the run learned -- its smoothed loss fell
below the reference by at least ``MIN_DROP`` (what "learning" means above) *and* by ``NOISE_UNITS`` of the
smoothed curve's own noise -- then gave back at least ``GAVE_BACK`` (80 %) of that drop, for a sustained
stretch and still at the end; it sits there flat (per-record noise of the log loss below ``FLAT``), the
total gradient norm after the jump has a median below ``DEAD_GRADIENT`` x its median before, and the
learning rate did not jump there (:mod:`chapters.doctor.schedule`). Why a share of the drop and not a
fixed level: "came back to where it started" is measured on the run's own scale -- a run that learned
little and one that learned much both died when they lost nearly all of it; 80 % leaves room for the
class prior (a dead network scores the entropy of the label frequencies, ln K for balanced classes, a
little below an untrained model's loss when the classes are not balanced). Why the gradient: a ReLU network
knocked off by one huge update outputs the same logits for every input, no gradient reaches the dead units,
and what is left is the output bias's (0.1-0.35 x the live network's norm in the benchmark), so half the
norm before is a generous bound; a run thrown back by a learning rate too high is *pushed around* and keeps
gradients as large as before or larger (``divergence``). Without ``grad_norm`` the loss's own noise is the
evidence: it falls to ``DEAD_CALM`` (a quarter) of the live network's or less (:func:`loss_calmed`). With
an LR jump at the relapse, the learning rate is the cause and ``divergence`` reports it.

Gone. Checked first (:func:`gradient_gone`): a median total gradient norm under ``GRADIENT_GONE`` (1e-6), and
under it per unit of train loss -- no layer gets a gradient, whatever the loss did before.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01): loss_plateau
(never learned and dead network) 26/27 top-1; all labels 218/243, 1/90 false alarms; fresh held-out
set (seed 8): 83/96, 2/35 -- both ``wave`` runs that never left ln K, which this rule names (docs/doctor.md).
Fourteenth pass (2026-12-02), logs from code written by others (``bench/doctor_outside.py``, logs that show
their fault): sets A + B loss_plateau 12/16 -> 14/16 (dead networks); the held-out set C 5/10 -> 8/10 (three
dead networks, two killed by an LR spike).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chapters.doctor import log_density, signals
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.reference import declared, rise_limit
from chapters.doctor.schedule import (STOPPED, lr_ever_raised, lr_raised, lr_ramped, lr_restored, lr_stopped,
                                      positive_lr)
from chapters.doctor.signals import (TREND_Z, blew_up, first_sustained, jitter_scale, noise_scale,
                                     quarter_medians, reference_level, smooth, tail, window_for)

MIN_DROP = 0.1
# Five epochs logged once each is enough to see a flat line (8 until 2026-12-02); a log that short usually
# starts late -- its first record is an epoch's mean -- and is then judged against a declared floor or ln K.
MIN_RECORDS = 5
GAVE_BACK = 0.8
DEAD_GRADIENT = 0.5
FLAT = 0.1  # per-record log-loss noise of a dead network: its batches only differ in their labels
CONSTANT = 0.02  # ... the same to 2 % on every batch: a prediction that no longer depends on the input
AT_UNIFORM = 0.03  # a settled loss this close to ln K, constant, predicts the class prior (_at_uniform)
MOTIONLESS = 1e-3  # per-record log-loss noise: batches scoring the same to 0.1 % (motionless)
DEAD_CALM = 0.25  # without gradient norms: that noise at most a quarter of the live network's (loss_calmed)
IN_ORDER = 4  # evaluations each lower than the last: an exact 1-in-24 chance (val_still_falling)
MIN_EVALS = signals.TREND_EVALS  # evaluations, for val_still_falling: a trend of 5 can reach the 5 % level
SHRINKING = 0.4  # the most of its opening an overconfident cross-entropy sheds down to ln K (came_down_to_uniform)
FLOOR_EVALS = 3  # evaluations that show where the val loss ended, for stuck_above_floor (the train loss decides)
STILL_FALLING = MIN_DROP / 2
# A significant trend that closes under 1 % of the gap to the floor over three quarters of the run: a dead
# network's output bias, or steps 1000x too small, moving it -- no learning (stuck_above_floor, closed_the_gap).
# Healthy runs converged on a loose floor drift by 3.8 % and more (5 % until a held-out set showed two at 4 %).
GAP_CLOSED = 0.01
FROZEN = 1e-3  # log val loss moving less than 0.1 % from one evaluation to the next: the model stands still
FROZEN_EVALS = 4  # evaluations in a row, at the end, that stood still (three steps between them)
LATE_START = 50  # steps: a first record averaging this many already holds the steepest descent
OPENING_UNITS = 3.0  # a first record this close to the opening median is one batch of it (opening_level)
OPENING_RECORDS = 5  # ... a median of fewer records (a run of under ~110) is too rough a start to replace it
FAR_ABOVE = 1.3  # x the loss floor: a calm run sitting there has stopped short (stuck_above_floor)
THROWN_FROM = 100.0  # x the level a run settled at: how far above it a blow-up left its first records
NEAR_FLOOR = 0.1  # a best this close to the declared floor reached it (near_floor) ...
GAP_SHARE = 0.25  # ... having closed this share of its starting gap to the floor (reached_floor)
FLOOR_SLACK = 0.01  # ... give or take this share of the loss's first-quarter level
LIVE_LR = 0.5  # the learning rate there at least half its peak: a schedule did not stop the training
MEDIAN_UNITS = 3.0  # standard errors of a median below the bar: the level proven lower (typically_lower)
GRADIENT_GONE = 1e-6  # median total gradient norm, and per unit of train loss: no weight gets one (gradient_gone)
LESSON = "docs/doctor.md#loss_plateau"
FIX = ("raise the learning rate (LR range test), check that labels match inputs and that activations are not "
       "dead; check the data pipeline feeds real labels")
DEAD_FIX = ("lower the learning rate or clip gradients so one bad step cannot switch every unit off; "
            "LeakyReLU/GELU, a fan-in initialisation; restart from a checkpoint before the jump")
DEAD_EXPERIMENT = "count active ReLU units on a batch before and after the jump"


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < MIN_RECORDS or run.nonfinite["train_loss"].any():
        return []
    gone = gradient_gone(run)
    if gone is not None:
        return [Finding("loss_plateau", 0.7, int(loss.index[0]),
                        f"the total gradient norm has median {gone:.1e} (below {GRADIENT_GONE:g}, and below it per "
                        "unit of train loss): no weight gets a gradient, so nothing the optimizer does can move the "
                        "loss -- every unit is switched off or saturated", fix=DEAD_FIX, experiment=DEAD_EXPERIMENT,
                        lesson=LESSON)]
    start = reference_level(run, loss)
    died = dead_network(run, loss, start)
    if died is None and blew_up(loss, start, declared(run)) is not None:
        return []  # the loss exploded and never recovered: divergence, not a learning rate too small
    if died is not None:
        step, score, evidence = died
        return [Finding("loss_plateau", score, step, evidence, fix=DEAD_FIX, experiment=DEAD_EXPERIMENT,
                        lesson=LESSON)]
    stopped = learning_rate_gone(run, loss)
    if stopped is not None:
        return [stopped]
    best = float(smooth(loss, window_for(len(loss))).min())
    floor = run.info("loss_floor")
    starts_late = loss.index[0] >= LATE_START
    swing = noise_scale(np.log(signals.after_start(loss)))  # per-record noise, after the untrained start
    still = motionless(loss, swing)  # judged on the log alone, wherever it starts
    if start <= 0 or (starts_late and floor is None and not declared(run) and not still):
        return []
    if floor is not None and reached_floor(floor, start, best, swing, loss):
        return []  # at the floor: converged, not stuck (at_floor, with the values check already has)
    reference = start
    start = opening_level(run, loss, start)
    drop = (start - best) / start
    stuck = stuck_above_floor(run, loss)
    # With ln K declared, learning means getting below what the uniform prediction scores: a fall from an
    # overconfident start down *to* ln K learned nothing about the data (:func:`never_below_uniform`).
    uniform = declared(run) and came_down_to_uniform(loss, best, reference, start)
    if stuck is None and not still and (learned(loss, reference if uniform else start, best) or
                                        val_still_falling(run, reference if declared(run) else None)):
        return []  # (stuck: whatever it fell from -- a blow-up before its first records -- it sits now)
    evidence = (f"train loss went from {start:.4g} to at best {best:.4g} ({drop:.1%} lower) over "
                f"{int(loss.index[-1] - loss.index[0])} steps")
    if still:
        evidence = (f"the train loss sat at {float(loss.median()):.4g} from its first record to its last, the same "
                    f"to {MOTIONLESS:.1%} on every batch: nothing the run did moved it")
    if uniform and start > reference:
        evidence += (f", never {MIN_DROP:.0%} below an untrained model's {reference:.4g} (ln K): it fell from an "
                     "overconfident start to the uniform prediction and no further")
    if stuck is not None:
        evidence = (f"after its first quarter the train loss sits at {stuck:.4g}, far above the loss floor "
                    f"{floor:.4g}, calm and with no downward trend that closes its gap to the floor, and so does "
                    "the validation loss: the run stopped learning far from what the data allows")
    elif floor is not None:
        evidence += f"; the loss floor is {floor:.4g}"
    score = 0.8 if still else confidence(0.5, MIN_DROP / max(drop, 1e-3))
    val = signals.val_losses(run)
    if swing >= signals.THRASH or \
            (len(val) >= MIN_EVALS and jitter_scale(np.log(val.iloc[len(val) // 4:])) >= signals.THRASH):
        # Swinging 10 % or more from record to record, the weights move a lot: not steps too small. Stuck all
        # the same, but the base confidence only, so that oscillation's thrashing comes first (an outside
        # recommender at SGD 1.0, batch 2: 25 % swings around ln 2 with a floor of 0.43 was loss_plateau).
        # A fixed validation set jumping that much between evaluations says the same of the weights.
        score = 0.5
    return [Finding("loss_plateau", score, int(loss.index[0]), evidence,
                    fix=FIX,
                    experiment="overfit one batch: 100 steps on a single batch must drive its loss near 0",
                    lesson=LESSON)]


def learning_rate_gone(run, loss: pd.Series) -> Finding | None:
    """The run stopped learning where its learning rate went to almost nothing and stayed there
    (:func:`schedule.lr_stopped`), and the train loss has not come down since: over the records from there
    (``MIN_RECORDS`` or more), the median of the last quarter is not ``STILL_FALLING`` (5 %) below that of
    the first -- and, with a declared floor, not at it (a run at its floor had nothing left to learn).

    Why a finding of its own: the never-learned test measures the whole run, and a run that learned for a
    while before its rate reached 0 did learn (an outside MLP whose scheduler set the rate to 0 at step 270
    of 1,600: healthy until 2026-12-06). The logged rate names the cause, so the confidence is high."""
    stopped = lr_stopped(run)
    if stopped is None:
        return None
    step, level, peak = stopped
    after = loss[loss.index >= step]
    if len(after) < MIN_RECORDS:
        return None
    first, last = quarter_medians(after)
    floor = run.info("loss_floor")
    if last < (1 - STILL_FALLING) * first or \
            (floor is not None and near_floor(last, floor, loss)):
        return None
    share = (loss.index[-1] - step) / max(loss.index[-1] - loss.index[0], 1)
    return Finding("loss_plateau", 0.8, step,
                   f"the learning rate fell to {level:.3g} -- under {STOPPED:.2%} of its peak {peak:.3g} -- at step "
                   f"{step} and stayed there for the last {share:.0%} of the run; the train loss has not come down "
                   f"since ({first:.4g} -> {last:.4g}): with no step size, no gradient can move the weights",
                   fix="find what set the learning rate to ~0: a scheduler told fewer total steps than the run "
                       "(num_training_steps, T_max, total_iters), a decay factor applied twice, a unit mix-up",
                   experiment="print optimizer.param_groups[0]['lr'] every few steps around step "
                              f"{step} and compare it with the schedule you meant",
                   lesson=LESSON)


def val_below_untrained(run, step: int, reference: float) -> bool:
    """With ln K declared (``reference``), do the evaluations from ``step`` on (3 or more) have a median at
    least ``MIN_DROP`` below it -- the model scores far better than one that knows nothing?

    Why the validation loss: a train loss need not be the cross-entropy ln K prices. A distilled student's
    is a temperature-scaled KL plus the cross-entropy: 4.6 untrained, 2-3 when it has learned -- never under
    1.5 x ln 4 -- while its validation cross-entropy falls from 1.5 to 0.5-1.0 (an outside set, 2026-12-06).
    Read against ln K, its train loss said "diverged" (a student at RMSprop 0.03, batch 2, thrown to 162 at
    its first record: ``divergence.check``) or "learned nothing" (a layer frozen by ``requires_grad=False``
    read as dead units: ``frozen._learned_nothing``) until then. A model thrown out of its basin, or a dead
    one, scores badly on any data, the fixed validation set included."""
    if not declared(run):
        return False
    val = signals.val_losses(run)
    val = val[val.index >= step]
    return len(val) >= 3 and float(val.median()) <= (1 - MIN_DROP) * reference


def gradient_gone(run) -> float | None:
    """The median total gradient norm when no weight gets a gradient: below ``GRADIENT_GONE`` (at least five
    records), and below it per unit of train loss too (:func:`per_unit_of_loss`); else None.

    Why a plateau and not ``vanishing_gradients``: vanishing is a *share* -- some layers get a few thousandths
    of what others get, which only per-group norms show (:mod:`chapters.doctor.gradients`). A total norm of
    1e-8 says that no layer gets anything: every ReLU is switched off, or every output saturated, and the loss
    cannot move whatever the learning rate. Four outside runs read that way -- a Cox model and a Siamese
    network whose units died, a ListNet ranker that momentum at LR 5 killed in its first records (gradient
    5e-8 beside a loss of 2.30 to the third digit) -- and their authors labelled every one a dead network
    (``loss_plateau``); six deep sigmoid stacks that logged only the total were ``vanishing_gradients`` to
    theirs, each marked ambiguous: the log cannot say which layers starve. (``vanishing_gradients``, ranked
    as the plateau's cause, until 2026-12-05.) Where per-group norms fan out by depth beside it, the
    gradients rule names the vanishing (:func:`gradients._shrank_everywhere`), and ranks above this."""
    norms = run.curve("grad_norm")
    if len(norms) < 5 or not 0 < float(norms.median()) < GRADIENT_GONE or per_unit_of_loss(run) >= GRADIENT_GONE:
        return None
    return float(norms.median())


def per_unit_of_loss(run) -> float:
    """The median of grad_norm / train_loss over the records that carry both (inf when none do).

    Why: a loss that went to zero has gradients that go with it -- cross-entropy's gradient is p - y, as
    small as the loss once the model is sure and right -- so a total norm of 1e-9 on a run that fits its
    data perfectly is convergence, not a dead network (real MLPs trained with Adam at 30x its learning rate,
    batch 2-8: 4 of 12 called vanishing until 2026-12-02, their losses at 1e-7 and 0). Gradients are gone
    when they are tiny beside a loss that is not."""
    if "train_loss" not in run.train:
        return math.inf
    both = run.train[["grad_norm", "train_loss"]].astype(float)
    both = both[np.isfinite(both).all(axis=1) & (both["train_loss"] > 0)]
    return float((both["grad_norm"] / both["train_loss"]).median()) if len(both) else math.inf


def near_floor(level: float, floor: float, loss: pd.Series) -> bool:
    """Is ``level`` within ``NEAR_FLOOR`` (10 %) of the declared floor, give or take ``FLOOR_SLACK`` (1 %) of
    where the train ``loss`` stood over its first quarter (median)?

    Why the slack: a floor of 0, or one near it, has no 10 % to speak of. Why a share of the opening and not
    a fixed amount: the loss has the units its author chose -- 0.02 (the fixed slack until 2026-12-07) is 1 % of
    ln 8 and more than a keypoint heatmap's whole MSE, 0.013 against a floor of 0.0009 (an outside pose
    estimator: a saturated head, stuck at 14 x its floor from its second record, read "at the floor"). Why a
    median over the first quarter and not the first record: first records thrown to 3e6 and 238 by a rate far
    too high are no scale."""
    opening = float(loss.iloc[:max(1, len(loss) // 4)].median())
    return level <= floor * (1 + NEAR_FLOOR) + FLOOR_SLACK * abs(opening)


def at_floor(run, loss: pd.Series) -> bool:
    """Has the train ``loss`` reached the ``loss_floor`` its ``run_start`` declares (:func:`reached_floor`),
    measured from the untrained reference (:func:`signals.reference_level`) with its best smoothed level and
    its per-record noise after the untrained start? False without a declared floor.

    The one test of "converged" that the rules share: a run at its floor has nothing left to learn, so it is
    no plateau, and a layer whose gradient share is small there starved nothing (``gradients``). :func:`check`
    asks :func:`reached_floor` itself, with the best level and the noise it has already computed: on a log of
    a million records each is a pass over all of them."""
    floor = run.info("loss_floor")
    if floor is None:
        return False
    best = float(smooth(loss, window_for(len(loss))).min())
    swing = noise_scale(np.log(signals.after_start(loss)))
    return reached_floor(floor, reference_level(run, loss), best, swing, loss)


def reached_floor(floor: float, start: float, best: float, swing: float, loss: pd.Series) -> bool:
    """Is the run at its declared floor: its best (smoothed) near it (:func:`near_floor`) --
    and, when it started measurably above the floor (by more than ``NOISE_UNITS`` of ``swing``, its per-record
    noise of the log loss), having closed at least ``GAP_SHARE`` (a quarter) of that starting gap?

    Why the gap: a floor close to the untrained loss leaves little to learn, and "within 10 % of the floor"
    then holds from the first record on, learned or not -- an outside beta-binomial regression, floor 2.88,
    starts at 3.05; its healthy runs end at 2.88, its dead ReLU network sat at 3.04-3.05 for 400 steps (6 %
    of the gap closed) and was ``healthy`` until 2026-12-05. A run that starts near its floor by no more
    than its noise (a fine-tuning run, a resumed run's tail) has nothing left to show, and stays healthy.
    Nor does a log whose first record comes ``LATE_START`` steps or more into the run: that record already
    holds the steepest descent, so the gap it leaves to the floor is no starting gap -- an outside graph link
    predictor logged every 50 steps stood at 0.56 there (ln 2 = 0.69 untrained) and ended at 0.52 against a
    floor of 0.47, having closed 45 % of that gap (two healthy runs, ``loss_plateau`` until 2026-12-07).
    Why a quarter and not the half asked until 2026-12-07: the first record already holds some of the
    descent whenever the log averages its first steps (ten, here), and a floor high above zero -- the
    entropy of noisy data in bits per dimension -- leaves the untrained model only a little above it: two
    healthy outside normalizing flows logged every 10 steps closed 47-50 % of the gap (5.32 -> 5.02 bits
    against 4.72) and were plateaus. The dead network and the steps too small close a few percent; on 104
    outside sets no run its author called a plateau came within ``NEAR_FLOOR`` of its floor at all."""
    if not near_floor(best, floor, loss):
        return False
    started_above = start > floor and (floor <= 0 or math.log(start / floor) > signals.NOISE_UNITS * swing)
    return not started_above or best - floor <= (1 - GAP_SHARE) * (start - floor) or loss.index[0] >= LATE_START


def opening_level(run, loss: pd.Series, reference: float) -> float:
    """Where the run started: the reference, or the median of the first smoothing window when higher (a
    lucky first batch is no start) -- and, without a declared class count, that median also when the first
    record is above it by less than ``OPENING_UNITS`` of the run's per-record noise (an unlucky first batch
    is no start either).

    Why both ways: the first record is one batch. A learning rate 10^7 too small leaves a hand-written MLP's
    loss where it began, swinging 0.9-3.8 per record around 2.4 -- and a first batch at 3.0 made its median
    "20 % lower" than its start (a learning run) while its fixed validation set moved 0.5 % in 1,240 steps
    (an independent set, 2026-12-03). A first record that is the untrained level stands far above the records
    after it (a run logged every 50 steps: 2.3, then 0.9), many noise units away, and stays the start."""
    window = loss.iloc[:window_for(len(loss))]
    opening = float(window.median())
    if declared(run) or len(window) < OPENING_RECORDS:
        return max(reference, opening)
    if not stands_above(loss, opening, noise_scale(np.log(signals.after_start(loss)))):
        return opening
    return max(reference, opening)


def stands_above(loss: pd.Series, opening: float, noise: float) -> bool:
    """Is the first record above the ``opening`` level by more than ``OPENING_UNITS`` of the run's
    per-record ``noise`` (log units)? Then it is the untrained level the run fell from at once, not one more
    batch of the opening (:func:`opening_level`, :func:`oscillation.thrashing`)."""
    return math.log(float(loss.iloc[0]) / opening) > OPENING_UNITS * noise


def stuck_above_floor(run, loss: pd.Series) -> float | None:
    """With a declared ``loss_floor``: the train loss's level over its last three quarters, when that level
    is at least ``FAR_ABOVE`` (1.3) x the floor -- or, for a floor of 0, ``MIN_DROP`` x the untrained
    reference (:func:`signals.reference_level`; a string-reversing GRU on answers shuffled against its
    inputs sat at 2.05 against ln 11 = 2.40, and a floor of 0 was no floor to the rule until 2026-12-05) --,
    the loss there is calm (per-record noise of the log loss below ``signals.THRASH``) with no downward
    trend (Mann-Kendall z above -``TREND_Z``, or a trend that closed less than ``GAP_CLOSED`` of the gap to
    the floor: :func:`closed_the_gap`), and the validation loss (at least ``FLOOR_EVALS`` evaluations) ends that far
    above the floor too with no downward trend after its first quarter (or one that closed less than
    ``GAP_CLOSED`` of its gap: a fixed validation set has no batch noise, so a dead network's creeping output
    bias -- 1.0588 -> 1.0578 in perfect order against a floor of 0.28 -- is significant, and nothing); else None.

    Why: "fell from its start" cannot tell a stuck run whose *first record* was the blow-up -- a learning rate
    far too high threw the loss to 1,200 before it was first logged, and every unit died; the loss then sat at
    ln 6 for the rest of the run, 3.8 x the floor (independent set, 2026-12-03: "healthy", its fall from
    1,200 read as learning). The floor says where the run should be heading. A live run that far from it
    still comes down -- slowly, noisily, but a Mann-Kendall test on a few hundred records sees the trend
    (every healthy outside run that far above its floor, 17 of them, trended down at z -2.5 to -13.7) -- or
    swings about (``oscillation``); one that sits there calm with no trend is getting nowhere. Why 1.3 (1.5
    until 2026-12-06): the floor of a rare event is low, and so is the entropy of its base rate -- outside
    click-through models that only learned a 5 % click rate sat calm at 1.37-1.53 x a floor of 0.11-0.12, and
    a dead WaveNet at 1.4 x its floor; the calm and no-trend tests decide, and at 1.3 no healthy run of
    twenty-three outside sets or the benchmarks was named. Why three evaluations (five until 2026-12-06): the
    validation loss only confirms where the run ended -- a trend of three cannot reach the 5 % level, so it
    cannot excuse the run either, while a fall by ``MIN_DROP`` still does (:func:`val_came_down`); four of the
    click-through plateaus evaluated three or four times, and no healthy run was named at three.

    Why not when both losses climb (an upward Mann-Kendall trend, z at least ``TREND_Z``, in the train loss
    after its first quarter *and* in the validation loss after its first quarter): a stuck run goes nowhere,
    and one whose losses both rise is going somewhere -- what a climb is, the rules for climbs judge
    (``divergence``, ``oscillation``). A value learner's temporal-difference loss is one such healthy climb:
    its targets come from its own target network, so as the values grow the loss bottoms out early and creeps
    up 5-20 %, sitting at 1.5-2 x a floor that only counts the rewards' noise (an outside DQN set, 2026-12-07:
    thirteen of 22 healthy runs were plateaus). No plateau of the outside sets or the benchmarks had both
    trends. Four to ``MIN_EVALS`` - 1 evaluations are too few for a significant trend; each one higher than
    the last (:func:`rose_in_order`) is the exact test instead -- a GAN generator's loss, 0.74 -> 0.29 and
    then creeping up to 0.40 as its discriminator improved, at 3.4 x a floor that counts only the
    reconstruction term, evaluated four times in rising order, was a plateau until 2026-12-07 (two outside
    runs). A run that never fell at all is a plateau whatever its losses do (:func:`check`: not learned).

    Not for a log density (a loss below zero, read moved up: :mod:`log_density`): the move places its floor
    half way between zero and the start by construction, so a multiple of that floor measures the move,
    not the run -- and a likelihood's floor counts only the observation noise, while what the model cannot
    know about the target adds nats no ratio can judge. Seven healthy outside neural processes, 1.4 -> 0.3
    nats against a floor of -0.88, sat at "1.5 x the floor" and were plateaus until 2026-12-07; the stuck
    densities of the outside sets are found without this reading (they never learned, or died)."""
    floor = run.info("loss_floor")
    val = signals.val_losses(run)
    if floor is None or floor < 0 or len(val) < FLOOR_EVALS or log_density.shift_of(run):
        return None
    settled = loss.iloc[len(loss) // 4:]
    level = float(settled.median())
    # A floor of 0 (a task a perfect model gets exactly right) has no multiples: far from it is a tenth of the
    # way up to what an untrained model scores.
    far = FAR_ABOVE * floor if floor > 0 else MIN_DROP * reference_level(run, loss)
    if level < far or float(val.iloc[-3:].median()) < far:
        return None
    evaluated = val.iloc[len(val) // 4:]
    train_trend, val_trend = signals.trend_z(np.log(settled)), signals.trend_z(np.log(evaluated))
    if noise_scale(np.log(settled)) >= signals.THRASH or \
            (train_trend <= -TREND_Z and closed_the_gap(settled, floor) >= GAP_CLOSED):
        return None
    if val_trend <= -TREND_Z and closed_the_gap(evaluated, floor) >= GAP_CLOSED:
        return None
    if train_trend >= TREND_Z and (val_trend >= TREND_Z or rose_in_order(val)):
        return None  # both losses climbing: moving, not stuck (see the docstring's last paragraph)
    # A validation set scored MIN_DROP better at the end than at its first evaluation -- and than the train
    # loss's first quarter, so that a first evaluation made while the loss was thrown up is no start -- was
    # being learned, even when too few evaluations make the fall significant (val_came_down).
    if val_came_down(val, float(loss.iloc[:len(loss) // 4].median())):
        return None
    return level


def rose_in_order(val: pd.Series) -> bool:
    """Did ``IN_ORDER`` to ``MIN_EVALS`` - 1 evaluations each score higher than the one before -- the exact
    1-in-24 chance (for four) that :func:`val_still_falling` reads the other way round?"""
    return IN_ORDER <= len(val) < MIN_EVALS and bool((val.diff().iloc[1:] > 0).all())


def val_came_down(val: pd.Series, opening: float) -> bool:
    """Did the validation loss end (median of its last three evaluations) ``MIN_DROP`` (10 %) below both its
    first evaluation and ``opening`` (the train loss's level over the run's first quarter)?

    Why in :func:`stuck_above_floor`: its trend test asks four or more evaluations after the first quarter to
    fall in order, and a short run evaluated five to ten times cannot show that however much it learned --
    four outside runs training soundly above a loose floor took 11-22 % off their validation loss (a transformer
    classifier 1.00 -> 0.83 at 1.6 x its floor) and read as a plateau until 2026-12-05. The stuck runs that
    rule names moved theirs by at most 4 % (label bugs, dead networks, a Bi-GRU CRF tagger at 1.61 to the
    third decimal); a fixed validation set has no batch noise to fall 10 % by chance."""
    return float(val.iloc[-3:].median()) <= (1 - MIN_DROP) * min(float(val.iloc[0]), opening)


def closed_the_gap(settled: pd.Series, floor: float) -> float:
    """The share of its distance to the loss floor that a loss covered over ``settled`` (the train loss's
    last three quarters, or the evaluations after the first quarter): from the median of that stretch's
    first quarter to the median of its last.

    Why beside the trend test in :func:`stuck_above_floor`: over a thousand records Mann-Kendall finds a
    drift of half a percent significant, and a run stuck on the label marginal drifts that much as it
    settles (an outside LSTM adder whose answers were permuted: 1.82 -> 1.79 against a floor of 0.28, z
    -2.0, closing 0.2 % of its gap -- healthy until 2026-12-05). A run that is learning closes a real share
    of it -- and a healthy run that has converged on a floor estimated too low still drifts by a few percent
    of it (two Nystrom-attention classifiers at 2x their floor: 3.8 and 4.4 %, in a set held out while the
    bar stood at 5 %); the label-shuffled and dead runs of the outside sets drift under 1 % of theirs,
    which is where :data:`GAP_CLOSED` sits."""
    first, last = quarter_medians(settled)
    return (first - last) / (first - floor) if first > floor else 0.0


def learned(loss: pd.Series, start: float, best: float) -> bool:
    """Did the smoothed loss get below ``start`` by ``MIN_DROP`` *and* by ``NOISE_UNITS`` of its own noise?

    The same test :func:`relapse` uses for "the run learned", so a run is never both "learned, then gave it
    back" and "never learned". Why the noise too: ``best`` is the *lowest* point of a smoothed curve, and
    the lowest of many noisy points lies below the level -- a regression at a learning rate 1000x too small,
    batch noise +-15 % per record, had a best 13 % under its start while its fixed validation set moved
    0.04 % over the whole run. The noise is measured around the trend (:func:`signals.jitter_scale`): on a
    run logged once an epoch for five epochs every step down is the trend, and its size is no noise."""
    return best <= learning_mark(loss, start) or typically_lower(loss, start)


def learning_mark(loss: pd.Series, start: float) -> float:
    """The level a smoothed loss must get down to for :func:`learned`: ``MIN_DROP`` below ``start`` and
    ``NOISE_UNITS`` of the smoothed log loss's noise below it."""
    noise = jitter_scale(np.log(loss)) / math.sqrt(window_for(len(loss)))  # of the smoothed log loss
    return start * min(1 - MIN_DROP, math.exp(-signals.NOISE_UNITS * noise))


def typically_lower(loss: pd.Series, start: float) -> bool:
    """Is the median record, after the first smoothing window, below ``start`` by ``MIN_DROP`` *and* by
    ``MEDIAN_UNITS`` (3) standard errors of that median (``MEDIAN_ERROR`` x the per-record noise / sqrt(n))?

    Why, beside the best: on a run whose records swing wildly the best of a smoothed curve proves nothing,
    but the median of many records is known to within its standard error however wild each one is. Class-
    sorted data logged three records a block swings 0.06 <-> 2.0 around a median of 0.3, against ln 10 =
    2.3: until 2026-12-02 "not learning", with the evidence "95.9 % lower" beside it. Why three standard
    errors and not ``NOISE_UNITS`` (six, until 2026-12-07): six is the bar for one record against the noise
    of one record; an error is already the uncertainty of the estimate, and three of them (p of about 0.001,
    as for the leakage rule's medians) is proof. Six asked a Poisson regression at batch 16, logged fifteen
    times, to fall a third before its fall of a fifth counted (a healthy outside run: a plateau until then)."""
    body = np.log(loss.iloc[window_for(len(loss)):])
    if len(body) < MIN_RECORDS:
        return False
    error = signals.MEDIAN_ERROR * noise_scale(body) / math.sqrt(len(body))
    return float(body.median()) <= math.log(start * (1 - MIN_DROP)) - MEDIAN_UNITS * error


def motionless(loss: pd.Series, swing: float) -> bool:
    """Did the loss not move at all: ``swing``, the per-record noise of the log loss (after the first 5 %,
    :func:`signals.noise_scale`), at most ``MOTIONLESS`` (0.1 %), and the median of its last tenth within
    ``MIN_DROP`` / 10 (1 %) of the median of its first 5 % (at least three records each)?

    Why, whatever the reference says: every batch scoring the same to 0.1 % means the predictions do not
    depend on the batch, and a loss that ends where its first records were means the run changed nothing
    while it was logged -- a network at SGD 1e-5 writing 0.789-0.790 for 500 steps. The reference cannot
    always say so: that capsule network's margin loss sits far below the ln 4 its declared class count
    implies, which read as "43 % learned" (an outside set, 2026-12-05). Healthy runs, however slow, move:
    the calmest outside healthy runs swing 0.2-1 % per record and still came down 1.4-9 %."""
    edge = max(3, len(loss) // 20)
    first, last = float(loss.iloc[:edge].median()), float(loss.iloc[-max(3, len(loss) // 10):].median())
    return swing <= MOTIONLESS and abs(math.log(last / first)) <= MIN_DROP / 10


def never_below_uniform(best: float, reference: float) -> bool:
    """Did the smoothed train loss (``best``, its lowest) never get ``MIN_DROP`` below the declared ln K?

    Why: ln K is what a model that knows nothing scores, the uniform prediction. A network initialised
    overconfident starts *above* it (logits of a few units: 2.7 against ln 8 = 2.08) and its first steps
    only shrink the logits towards uniform -- a fall of 20-30 % that says nothing about the data. Measured
    from ln K, such a run never learned: a dead ReLU network (biases at -5) sitting at ln 8 to the third
    decimal, a transformer at SGD 1e-4 that took 350 steps to come down to ln 13, a tabular model whose
    labels were shuffled -- all healthy until 2026-12-05, their fall from the opening read as learning."""
    return best > (1 - MIN_DROP) * reference


def came_down_to_uniform(loss: pd.Series, best: float, reference: float, opening: float) -> bool:
    """Did the train loss come down to the declared ln K (``reference``) and stop there: never ``MIN_DROP``
    below it (:func:`never_below_uniform`), not still coming down (:func:`still_descending`), and by less than
    ``SHRINKING`` of its ``opening`` level?

    Why the second: :func:`never_below_uniform` reads a run that fell from an overconfident start *to* ln K
    and stopped there; a loss still falling by a tenth and more over its second half has stopped nowhere.
    Why the third: an overconfident head shrinking its logits towards uniform sheds a fifth to a third of its
    opening (2.7 -> ln 8 = 2.08: 23 %; a graph network at 1.8 x ln 4, 14 %; a segmentation net at 2 x ln 2,
    11 %); a fall of more than 40 % ending about ln K is a loss that is no K-way cross-entropy, whose scale
    ln K does not set -- a detector's focal heatmap loss plus box L1 (ten healthy outside runs falling 42-65 %
    to about ln 4), a margin (ArcFace) loss that subtracts its margin from the true class's logit and scales
    the rest (a healthy speaker classifier, 48 % down to 2 x ln 40): eleven plateaus until 2026-12-07. On the
    fifty-two outside sets no run whose author called it a plateau fell 40 % down to ln K; the cost is a
    cross-entropy initialised overconfident enough to open at 1.7 x ln K and more (logits spread by 1.4 units
    and more at K = 4) that only shrank them."""
    return never_below_uniform(best, reference) and not still_descending(loss) and \
        (opening - best) / opening < SHRINKING


def still_descending(loss: pd.Series) -> bool:
    """Is the train loss still coming down over its second half: a downward Mann-Kendall trend there (z at most
    -``TREND_Z``) and its last tenth ``MIN_DROP`` or more below its first tenth? A run that sank to the uniform
    prediction sits there: its second half is flat (:func:`came_down_to_uniform`)."""
    second = loss.iloc[len(loss) // 2:]
    if len(second) < MIN_RECORDS:
        return False
    return signals.trend_z(np.log(second)) <= -TREND_Z and \
        float(signals.tail(second).median()) <= (1 - MIN_DROP) * float(signals.head(second).median())


def val_still_falling(run, reference=None) -> bool:
    """Has the validation loss come down over the run: over at least ``MIN_EVALS`` evaluations, a downward
    Mann-Kendall trend (:func:`signals.trend_z` <= -1.96, the 5 % level) *and* the last evaluation at least
    ``STILL_FALLING`` below the first -- or below the declared ln K (``reference``), when the first is above
    it: a val loss that only came down to the uniform prediction learned nothing (:func:`never_below_uniform`).

    Why: the train loss of a small-batch run is too noisy to show slow progress -- a batch-2 run that took
    7 % off its fixed validation set over 600 steps read as "9.6 % lower at best" and was called a plateau
    until 2026-12-01. A validation set is measured the same way every time, so a steady fall there is
    learning, however slow. Both tests: the trend says it is real, the size says it matters -- a learning
    rate 300-3000x too small also takes a fixed validation set down steadily, by at most 3.5 % over a run
    in the benchmark (under 1 % in most), where slow healthy runs took 7 % and more. The first evaluation
    comes after some training, so this fall is smaller than the train loss's from an untrained model:
    half of ``MIN_DROP``. From ``MIN_EVALS`` (5) evaluations: the fewest whose Mann-Kendall trend can reach
    the 5 % level (all five in order); until 2026-12-03 eight, and a character CNN on class-sorted text,
    evaluated six times, val 1.61 -> 1.44 in order beside a train loss swinging about ln 5 by its class
    blocks, was a plateau. With ``IN_ORDER`` (4) evaluations Mann-Kendall's normal approximation cannot reach
    it, but the exact test can: four values falling in order happen by chance once in 4! = 24 orders (p =
    0.04) -- a self-distillation run of 80 steps, val 1.96 -> 1.71 -> 1.50 -> 1.36 beside a train loss that
    rose in its first steps (a teacher sharpening), was a plateau until 2026-12-05."""
    val = signals.val_losses(run)
    if len(val) < IN_ORDER:
        return False
    first = float(val.iloc[0]) if reference is None else min(float(val.iloc[0]), reference)
    falling = (val.diff().iloc[1:] < 0).all() if len(val) < MIN_EVALS else signals.trend_z(np.log(val)) <= -TREND_Z
    return bool(falling) and float(val.iloc[-1]) <= (1 - STILL_FALLING) * first


def relapse(loss: pd.Series, reference: float):
    """(step, best, end) when the run learned and then gave most of it back, to the end; else None.

    ``best`` is the smoothed minimum, ``step`` the first record of the sustained stretch at or above
    ``best + GAVE_BACK x (reference - best)``, ``end`` the smoothed level over the last fifth -- or from
    ``step`` on, when every smoothed record since then stayed at or above that mark. Why the second: a run
    that turned in its last tenth has not yet moved the last fifth's median (a logistic regression whose
    loss's sign flipped at step 600 of 800: 0.34, then 0.49, 0.70, 1.21 in its last records, above its
    untrained ln 2 -- healthy until 2026-12-04); a climb that never came back down is given back to the end.
    """
    if len(loss) < 8 or reference <= 0:
        return None
    window = window_for(len(loss))
    smoothed = smooth(loss, window)
    best_step, best = smoothed.idxmin(), float(smoothed.min())
    if not learned(loss, reference, best):
        return None  # nothing to give back
    back = best + GAVE_BACK * (reference - best)
    after = smoothed.loc[best_step:]
    step = first_sustained(after >= back, max(3, len(loss) // 50))
    if step is None:
        return None
    end = float(tail(smoothed, 0.2).median())
    if end < back and not (after.loc[step:] >= back).all():
        return None  # came back down (or a late climb that has not stayed up to the end)
    return int(step), best, max(end, float(after.loc[step:].median()))


def dead_network(run, loss: pd.Series, reference: float):
    """(step, confidence, evidence) when the network learned, died and sits at the reference; else None.

    The evidence is the gradient norm's collapse when the log has one (:func:`gradients_collapsed`), or the
    loss's own calm (:func:`loss_calmed`) -- with a gradient that did not grow -- or a validation loss that
    stopped moving above its best (:func:`_stood_still_worse`, also for a relapse the reference cannot
    show) -- and, after a one-off spike
    of the learning rate, a loss that never comes down again (:func:`_killed_by_spike`). Never for a loss
    that sits above divergence's rise limit (:func:`reference.rise_limit`): a dead network predicts the same
    for every input and scores the class prior's entropy, about ln K, and a loss thrown to 3.5x ln V that
    sits there calmly (a constructed mid-run divergence) has risen.

    Nor where the relapse came as the learning rate was raised several-fold and left high (a jump, or a ramp
    that never stops): then the rate threw the run out, and :mod:`chapters.doctor.divergence` names it with
    the rate as its cause -- even when the loss now sits at ln K to the third decimal with no gradient left,
    every unit switched off by the raised rate's first updates. Whether to call that network dead or diverged
    was decided by the people who label runs: of sixteen outside runs read so, across fifteen sets and
    fifteen authors, fourteen were ``divergence`` to their authors (LR schedules at 30-3,000x, warm-ups that
    never stopped) and two a dead network; the fix is the rate either way. (``loss_plateau`` from 2026-12-03
    until 2026-12-07, on the word of six authors of sets since lost -- a distilled MLP, a point-cloud net, a
    tabular ResNet, a GIN, a RankNet and a CNN, all called dead networks; on the sets kept since, the word went
    the other way, fourteen to two.)"""
    relapsed = relapse(loss, reference)
    if relapsed is None:
        return _killed_at_once(run, loss, reference) or _killed_above_floor(run, loss) or \
            _stood_still_worse(run, loss, reference)
    step, best, end = relapsed
    if end >= rise_limit(run, loss, reference):
        return None  # far above what a constant prediction scores (the class prior's entropy): risen, divergence
    spiked = lr_raised(run, step, window_for(len(loss)))
    restored = spiked and lr_restored(run, step)
    if (spiked and not restored) or lr_ramped(run, step):
        return None  # the raised rate threw it out: divergence's, dead or not (see above)
    # How calm the loss is where it settled: the second half of the stretch from the relapse on (three
    # records or more). The first half can still be coming down from the blow-up that killed the units.
    after = loss.loc[step:]
    settled = after.iloc[len(after) // 2:] if len(after) >= 6 else after
    calm = noise_scale(np.log(settled))
    if calm > FLAT:
        return None
    said = (f"train loss fell to {best:.4g}, then jumped back to {end:.4g} at step {int(step)} (an untrained model "
            f"scores {reference:.4g}) and stayed there, while ")
    norms = run.curve("grad_norm")
    ratio = gradient_ratio(norms, step) if len(norms) >= 8 else None  # None: too few norms logged
    if restored:  # the last third: where the blow-up's tail has surely come down
        return _killed_by_spike(ratio, step, after.iloc[len(after) * 2 // 3:], said)
    # Either piece of evidence will do, as long as the gradient did not stay as large as it was. Its collapse
    # depends on the batch: what is left of a dead network's gradient is the output bias's, which measures
    # how far each batch's label mix is from the prior -- with small batches 0.6 x the live norm (an
    # independent MLP on Gaussian blobs, 2026-12-02, called divergence until then). The loss's calm does
    # not: a constant prediction scores ln K on any batch.
    if ratio is None:
        found = loss_calmed(loss, step, calm, said)
    else:
        found = gradients_collapsed(ratio, step, said) or (loss_calmed(loss, step, calm, said) if ratio < 1 else None)
    # A third piece of evidence, for a gradient that grew only because the loss it is measured against did
    # (a network sure of its training batches, loss 0.001, has almost none): the val loss stood still.
    return found or _at_uniform(run, loss, settled, calm, reference, step, said) or \
        _stood_still_worse(run, loss, reference)


def _at_uniform(run, loss: pd.Series, settled: pd.Series, calm: float, reference: float, step: int, said: str):
    """With ln K declared (``reference``): does the settled loss sit at ln K -- its median within
    ``AT_UNIFORM`` (3 %) of it -- the same on every batch (per-record noise at most ``CONSTANT``, 2 %), having
    gone back there without a record blown up to ``signals.BLOWUP`` (10) x ln K on the way (from ``step`` on)?

    Why, whatever the gradient did: a model that scores ln K on every batch predicts the uniform
    distribution (the class prior) for every input -- it learns nothing from its targets any more. A live
    network whose labels stopped matching its inputs does that, chasing each batch's random labels with
    gradients as large as before (an outside keyword spotter whose labels were shuffled within each batch
    from step 200: 0.02, then 2.08-2.10 beside ln 8 = 2.079 to the end, its gradient norm up 6-fold --
    ``divergence`` until 2026-12-06; one record of the switch reached 4.4). Why not after a blow-up: a loss
    thrown far above ln K by an update too large, then sitting at ln K with a gradient larger than before, is
    the run the authors call ``divergence`` (the update threw it; a gradient that did not collapse says no
    unit died)."""
    if not declared(run) or calm > CONSTANT or abs(float(settled.median()) / reference - 1) > AT_UNIFORM or \
            float(loss.loc[step:].max()) >= signals.BLOWUP * reference:
        return None
    return (int(step), 0.8, said + f"the loss sits at ln K ({reference:.4g}) to within {AT_UNIFORM:.0%}, the same on "
            "every batch: the model predicts the class prior for every input and learns nothing from its targets "
            "-- its units died, or its labels no longer match its inputs")


def _killed_at_once(run, loss: pd.Series, reference: float):
    """A network killed by its first updates: the loss blew up (:func:`signals.blew_up` against the declared
    ln K) at a learning rate that was never raised, and from there sits at ln K or a little below --
    constant to ``CONSTANT`` (2 %) per record over the second half of the records after the blow-up, and
    under divergence's rise limit (:func:`reference.rise_limit`).

    Why: :func:`relapse` needs a run that learned first; this one died before it could. A learning rate far
    too high from the first step throws the weights out at once (the loss at 200x ln K in its first record)
    and one such update can switch every ReLU off -- after which the network predicts the class prior for
    every input and scores its entropy, ln K for balanced classes, on every batch to the third decimal (an
    outside SqueezeNet at RMSprop 0.05: 345, then 1.79-1.81 = ln 6 for 790 steps, called divergence until
    2026-12-05, whose advice -- a lower learning rate -- is right, but whose diagnosis sends the reader
    looking for a climbing loss). A diverged network that is still alive scores far above ln K (confidently
    wrong) or swings: every diverged outside run that sat near ln K after a blow-up moved 1.9-6.5 % per record,
    or had its learning rate raised mid-run (which :mod:`chapters.doctor.divergence` reads)."""
    if not declared(run) or lr_ever_raised(run):
        return None
    hit = blew_up(loss, reference, True)
    after = loss.loc[hit:].iloc[1:] if hit is not None else loss.iloc[:0]
    if len(after) < 2 * MIN_RECORDS:
        return None
    settled = after.iloc[len(after) // 2:]
    calm, level = noise_scale(np.log(settled)), float(settled.median())
    if calm > CONSTANT or level >= rise_limit(run, loss, reference):
        return None
    return (int(after.index[0]), 0.8,
            f"train loss hit {float(loss.loc[hit]):.4g} at step {hit}, x{float(loss.loc[hit]) / reference:.0f} "
            f"what an untrained model scores ({reference:.4g}), and from step {int(after.index[0])} sits at "
            f"{level:.4g}, constant to {np.expm1(calm):.1%} per record: the network predicts the same for every "
            "input -- the first updates, at a learning rate far too high, switched every unit off")


def _killed_above_floor(run, loss: pd.Series):
    """:func:`_killed_at_once` for a log that declares no class count but a ``loss_floor``: over the second
    half of the records the loss sits constant (per-record scale at most ``CONSTANT``, 2 %, and its last
    quarter not that much below its first either) at ``FAR_ABOVE`` x the floor or more, after a first half
    that reached ``THROWN_FROM`` (100) x that level -- at a learning rate never raised.

    Why: without ln K the level a dead network scores is not known in advance, but the floor says the run
    is far from done, and a loss the same to 2 % on every batch says the predictions no longer depend on
    the input -- a constant output scores the targets' spread, whatever they are. Why the blow-up: a loss
    thrown 100-fold above where it ends came from updates far too large, the kind that switch every unit off
    (an outside graph link predictor at Adam 0.3: 27,600 at its first record, then ln 2 to the fourth
    decimal for 500 steps against a floor of 0.47; a mixture density network at RMSprop far too high, 145 x
    -- both healthy until 2026-12-07), while healthy runs fall 10-30 x from their initialisation to where
    they converge beside a floor (an outside ODE fit, 11 x, calm to 0.4 % at 7 x its floor)."""
    floor = run.info("loss_floor")
    if declared(run) or floor is None or floor <= 0 or lr_ever_raised(run) or len(loss) < 2 * MIN_RECORDS:
        return None
    opening, settled = loss.iloc[:len(loss) // 2], loss.iloc[len(loss) // 2:]
    calm, level = noise_scale(np.log(settled)), float(settled.median())
    first, last = quarter_medians(settled)
    if calm > CONSTANT or last < (1 - CONSTANT) * first or level < FAR_ABOVE * floor or \
            float(opening.max()) < THROWN_FROM * level:
        return None
    hit = opening.idxmax()
    return (int(hit), 0.8,
            f"train loss hit {float(loss.loc[hit]):.4g} at step {int(hit)}, x{float(loss.loc[hit]) / level:.0f} where "
            f"it ended, and over its second half sits at {level:.4g}, {level / floor:.1f} x the loss floor "
            f"{floor:.4g}, constant to {np.expm1(calm):.1%} per record: the network predicts the same for every "
            "input -- the first updates, far too large, switched every unit off")


def stopped_moving(run, loss: pd.Series):
    """(first, best, end): the validation losses of the stretch at the end of the run that stood still (from
    ``first``), the best of all evaluations and the last -- when the last ``FROZEN_EVALS`` or more moved less
    than ``FROZEN`` (0.1 %) from one to the next while the learning rate there was at least ``LIVE_LR`` of
    its peak and never jumped several-fold, and the training loss's second half is not far below the end
    (its median at least 1 - ``MIN_DROP`` x it); else None.

    Why: a fixed validation set scores the weights, and at a working learning rate every step moves them --
    a live run's val loss changes by 0.1 % or more between evaluations even when converged (on ~2,000
    cached logs no healthy run stood still at more than half its peak rate -- the healthy ones that did had a
    schedule that had annealed it -- while at 0.2 % a few converged ones did). A network that stopped
    changing at a working learning rate gets no gradient that moves it: every unit switched off (it outputs
    the class prior for any input). (A learning rate far too small moves a fixed validation set by about
    0.1 % per evaluation too -- a steady creep, where a converged run jitters -- too close to tell apart
    here: the never-learned test above judges those runs on their train loss.) Why the training loss: a
    model that memorised its training set to a loss of 0 stops changing too, with its val loss frozen far
    above its train loss -- ``overfitting``'s run."""
    val = signals.val_losses(run)
    lr = positive_lr(run)
    if len(val) < FROZEN_EVALS or lr.empty or lr_ever_raised(run):
        return None
    moves = np.abs(np.diff(np.log(val.to_numpy())))
    still = int(np.argmax(moves[::-1] >= FROZEN)) if (moves >= FROZEN).any() else len(moves)  # moves at the end
    first = len(val) - 1 - still
    if still < FROZEN_EVALS - 1:
        return None
    at = lr[lr.index <= val.index[first]]
    if float(at.iloc[-1] if len(at) else lr.iloc[0]) < LIVE_LR * float(lr.max()):
        return None
    end = float(val.iloc[-1])
    if float(loss.iloc[len(loss) // 2:].median()) < (1 - MIN_DROP) * end:
        return None
    return int(val.index[first]), float(val.min()), end


def _stood_still_worse(run, loss: pd.Series, reference: float):
    """The dead network seen on the validation loss: it stood still (:func:`stopped_moving`) at ``1 +
    MIN_DROP`` x its best or more, and no higher than divergence's rise limit above the untrained level.

    Why beside :func:`relapse`: that test measures the relapse against the untrained reference, and a
    ``vocab_size`` that is the *input's*, declared alone (a bag-of-words classifier: ln 600 = 6.4 for six
    classes), puts the reference far above where a dead network sits (ln 6 = 1.79, to the third decimal at
    every evaluation after the jump). Why beside the gradient's collapse: a network sure of its training
    batches (loss 0.001) has almost no gradient, so the output bias's gradient after the death is 80 times
    larger, not smaller -- such a run was ``grad_explosion`` until 2026-12-03."""
    still = stopped_moving(run, loss)
    if still is None:
        return None
    first, best, end = still
    if end < (1 + MIN_DROP) * best or end >= rise_limit(run, loss, reference):
        return None
    return (first, 0.8, f"the validation loss fell to {best:.4g}, then went back up to {end:.4g} and has not "
                        f"moved by 0.1 % between evaluations since step {first}, at a learning rate still "
                        "where it was: the network stopped changing -- it died (every unit switched off) and "
                        "cannot recover")


def _killed_by_spike(ratio: float | None, step: int, settled: pd.Series, said: str):
    """After a one-off spike of the learning rate (raised, then put back: :func:`schedule.lr_restored`):
    is the settled loss going nowhere (over at least ``MIN_RECORDS`` records, the median of its last quarter
    less than ``STILL_FALLING`` -- 5 % -- below that of its first), and the gradient no larger than before
    (when logged)?

    Why: back at the learning rate that taught it everything it knew, a live network learns again -- the
    loss comes down from where the spike threw it. One that sits at the untrained level with no trend at
    all has lost its units to the one huge update (a GRU classifier whose ReLU head got one step at 1000x
    the LR: back at ln 7 to within 1 % for the 230 steps that followed, 2026-12-02 -- called divergence
    until then, which advises lowering an LR that was already low again). Not a trend test: the tail of the
    blow-up still settles by a percent or two, significantly but not by learning. A gradient that grew
    says the weights are still being pushed about, alive."""
    if len(settled) < MIN_RECORDS:
        return None
    first, last = quarter_medians(settled)
    if last < (1 - STILL_FALLING) * first:
        return None
    if ratio is not None and ratio >= 1:
        return None
    return (int(step), 0.8, said + "its learning rate was back where it had been when the run learned, and the loss "
            "did not come down again: the one-off spike of the learning rate killed the network (every unit "
            "switched off), and it cannot recover")


def gradient_ratio(norms: pd.Series, step: int) -> float:
    """The total gradient norm's median after ``step`` over its median before (inf when either side has
    fewer than three records)."""
    before, later = norms[norms.index < step], norms[norms.index > step]
    if len(before) < 3 or len(later) < 3 or not float(before.median()) > 0:
        return math.inf
    return float(later.median()) / float(before.median())


def gradients_collapsed(ratio: float, step: int, said: str):
    """Did the total gradient norm's median after the jump fall below ``DEAD_GRADIENT`` x its median before
    (``ratio``, :func:`gradient_ratio`)?"""
    if ratio >= DEAD_GRADIENT:
        return None
    return (int(step), confidence(0.8, DEAD_GRADIENT / max(ratio, 1e-6)),
            said + f"the gradient norm fell to {ratio:.1e} of what it was: the network died (every unit "
                   "switched off) and cannot recover")


def loss_calmed(loss: pd.Series, step: int, calm: float, said: str):
    """Without gradient norms: did the loss's record-to-record noise (:func:`signals.noise_scale` of the log
    loss from ``step`` on: ``calm``) fall to ``DEAD_CALM`` of what it was before the jump, or less?

    Why: a dead network predicts the same for every input, so its loss on a batch depends on that batch's
    labels alone -- for near-balanced classes almost not at all (uniform predictions score exactly ln K on
    any label). A live network's batches differ through its predictions too. In the benchmark the dead
    networks' noise fell to 0.01-0.32 x (most under 0.1); runs thrown back by a learning rate too high kept
    0.2-10 x theirs -- all of those below a quarter with the LR jump on record, which rules them out first
    (an LR raised 200-fold switches the units off too, but then the LR is the cause: ``divergence``). Until
    2026-12-02 a dead network logged without ``grad_norm`` was called divergence (3 of the 4 such runs in an
    independent set of MLP/CNN/bag-of-words runs)."""
    before = loss[loss.index < step]
    if len(before) < 6:
        return None
    live = noise_scale(np.log(before.iloc[len(before) // 3:]))  # after the first third's steep descent
    if not live > 0 or calm > DEAD_CALM * live:
        return None
    return (int(step), confidence(0.7, DEAD_CALM * live / max(calm, 1e-9)),
            said + f"its record-to-record noise fell to {calm / live:.2f} x what it was: the same prediction "
                   "for every input, the network died (every unit switched off) and cannot recover")
