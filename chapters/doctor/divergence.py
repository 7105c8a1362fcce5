"""``divergence``: the training loss climbs far above where it started, without becoming NaN.

Statistic: the train-loss curve smoothed by a rolling median, compared with the *untrained reference*
(:func:`signals.reference_level`: ln V or ln K when ``run_start`` declares ``vocab_size`` /
``num_classes``, else the first record). Threshold: the smoothed loss stays above the reference by a
factor of at least ``RISE`` *and* by at least ``NOISE_UNITS`` of the smoothed curve's own noise (on a log
scale) for a sustained stretch (``max(3, 2 %)`` of the records); or one record at ``BLOWUP`` (10) x the
reference after which the run never gets below the reference again (:func:`signals.blew_up`); or the run
learned and then gave most of it back, to the end (:func:`plateau.relapse`) without the signature of a
dead network; or, at the record where the logged LR rose ``LR_JUMP``-fold, the run gave back ``GAVE_BACK``
of what it had learned (:func:`thrown_back`), even if it recovered later -- once the rate was down again, not
while it was still raised (:func:`relearned_at_raised_rate`); or the whole run climbed, a steady upward
trend to twice its opening, for a loss too noisy for the rise limit (:func:`climbed_steadily`). Why: a random
model's loss is the worst a sane run sees; an optimizer that pushes it higher is being thrown out of the basin (learning
rate too high for the curvature), and one that undoes what the run learned is being thrown out of the
valley it found. Why the declared reference: an LR far too high can throw the loss up between the first
and the second record, so a start level taken from the first records would be measured after the jump.
Why noise units: with the first record as reference, a small-batch run's first record can be 50 % off,
and its later records swing as much.

The cause, when the log shows it: if the logged learning rate rose several-fold at the records where the
loss left (:mod:`chapters.doctor.schedule`), the finding says so and its confidence is at least
``LR_CAUSE`` -- a loss that leaps at the very record the LR was raised is the most specific evidence a log
can hold -- and it stands even when the loss fell back later (with a schedule decaying the raised LR the
run recovers, and ``oscillation``'s bounce would otherwise claim it).

A run that came back to the reference and *sits* there with collapsed gradients is a dead network, which
:func:`plateau.dead_network` reports as ``loss_plateau``; this rule leaves it to that one, even when the
bad update threw the loss far above the reference on its way down -- unless the learning rate was raised
at the relapse and left high: then this rule names it, the rate as its cause, dead or not (fourteen of
sixteen outside authors called such runs divergence; :func:`plateau.dead_network`).

A run whose loss rose like that but then fell back and *ended* below its start
(:data:`oscillation.FELL_BACK`), or back below ``RISE`` x it and still swinging (:func:`oscillation.fell_back`),
with no LR jump, is not diverging: it was thrown out of the valley and fell back in, and
:mod:`chapters.doctor.oscillation` reports that swing.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01): divergence
29/36 top-1 (30/36 at any rank; 20/36 before the LR-as-cause and relapse changes); all labels 218/243, 1/90
false alarms; fresh held-out set (seeds 5-6 / 5): 93/111, 3/40 (docs/doctor.md). :func:`thrown_back`
(2026-12-02) named 3 more divergence runs of seeds 4-9 and 2 of seed 10, and changed nothing else on
seeds 0-10, the constructed shapes or the labelled benchmark. 2026-12-02: 28/36 (one early divergence that
came back to its start and swings there is ``oscillation`` now, :func:`oscillation.fell_back`); fresh
held-out seeds 28-29: divergence 17/32 (runs thrown out before the first record with no class count, and
divergence recipes whose loss never rose, are the misses). Fourteenth pass, logs from code written by
others (``bench/doctor_outside.py``, logs that show their fault): sets A + B divergence 17/20, nan_loss 8/9
(after :func:`straight_to_nan`); the held-out set C divergence 8/8, nan_loss 1/3 (two climbed first).
"""

from __future__ import annotations

import math

import numpy as np

from chapters.doctor import signals
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.oscillation import fell_back, thrashing
from chapters.doctor.plateau import (GAVE_BACK, LIVE_LR, MIN_DROP, dead_network, learning_mark, opening_level,
                                     relapse, val_below_untrained)
from chapters.doctor.reference import LOW_SHARE, RISE, declared, rise_limit, rose_past_first
from chapters.doctor.schedule import LR_JUMP, climb_start, lr_jump, lr_ramp, positive_lr
from chapters.doctor.signals import (TREND_EVALS, TREND_Z, blew_up, first_sustained, median_ahead, reference_level,
                                     smooth, window_for)

LR_CAUSE = 0.9
KEPT_BACK = 0.6  # of the loss a jump gave back, still held at the end (jumped_back)
RAMP_GAVE_BACK = 0.5  # of what the run learned, given back by the end while its rate kept rising (climbed_as_rate_rose)
# A run logged once an epoch for five epochs: a sustained rise is 3 records (``max(3, 2 %)``), with two
# before it to say where the run was. (6 until 2026-12-02, which left such logs "healthy".)
MIN_RECORDS = 5
CLIMB = 2.0  # climbed_steadily: the last fifth at twice the first fifth or more ...
CLIMB_Z = 3.0  # ... with an upward Mann-Kendall trend this strong over the whole run (one-sided p ~ 0.001)
CLIMB_RECORDS = 10  # records, at least: a trend of fewer reaches that z only in perfect order
LESSON = "docs/doctor.md#divergence"
FIX = "lower the learning rate (2-10x), add or lengthen warmup, clip gradients at 1.0"
EXPERIMENT = "LR range test: short runs at LRs a factor 3 apart; keep the largest that falls smoothly"


def check(run) -> list[Finding]:
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < MIN_RECORDS:
        return []
    start = reference_level(run, loss)
    if start <= 0:
        return []
    window = window_for(len(loss))
    smoothed = smooth(loss, window)
    sustained = max(3, len(loss) // 50)
    exploded = blew_up(loss, start, declared(run))
    if (thrashing(run, loss, start) and not ramped_into(run, exploded)) or dead_network(run, loss, start):
        return []  # swinging around the untrained level for the whole run, or died: oscillation and
        # loss_plateau report those
    if exploded is not None and straight_to_nan(run, loss, exploded, sustained):
        return []  # a blow-up that overflowed at once: nan_loss reports it, with the LR jump that caused it
    if exploded is not None and not val_below_untrained(run, exploded, start):
        peak = float(loss.max())
        return [_finding(run, smoothed, exploded, window, confidence(0.7, peak / (signals.BLOWUP * start)),
                         f"train loss hit {peak:.4g} at step {int(loss.idxmax())}, x{peak / start:.0f} what an "
                         f"untrained model scores ({start:.4g}), and never got back below the untrained level "
                         f"(x{signals.RELAPSE:g}) again: it learned nothing after the blow-up")]
    limit = rise_limit(run, loss, start)
    step = first_sustained(smoothed >= limit, sustained)
    if step == loss.index[0] and started_there(run, loss, smoothed, start, limit):
        step = None
    if step is not None and val_below_untrained(run, step, start):
        step = None  # the train loss stays up, but its model scores far below ln K: see val_below_untrained
    if step is not None and (lr_jump(run, climb_start(smoothed, step), window, step) >= LR_JUMP
                             or not fell_back(loss, smoothed, start)):
        peak = float(smoothed.max())
        return [_finding(run, smoothed, step, window, confidence(0.7, peak / (RISE * start)),
                         f"train loss rose from {start:.4g} at the start to {peak:.4g} (x{peak / start:.1f}) "
                         f"and stayed above x{RISE} from step {step}")]
    if rose_past_first(run, loss) and not fell_back(loss, smoothed, start):
        level = float(loss.iloc[1:].quantile(LOW_SHARE))
        return [_finding(run, smoothed, int(loss.index[1]), window, confidence(0.7, level / (RISE * start)),
                         f"train loss went from {start:.4g} at the first record to a median of "
                         f"{float(loss.iloc[1:].median()):.4g}, and {1 - LOW_SHARE:.0%} of the records after the "
                         f"first stayed above {level:.4g} (x{level / start:.1f}): the run was thrown up at once "
                         "and never came back")]
    climbed = climbed_steadily(loss, smoothed)
    if climbed is not None:
        step, opening, end, trend = climbed
        return [_finding(run, smoothed, step, window, confidence(0.7, end / (CLIMB * opening)),
                         f"train loss climbed from {opening:.4g} (its first fifth) to {end:.4g} (its last fifth, "
                         f"x{end / opening:.1f}) with a steady upward trend (Mann-Kendall z = {trend:+.1f}): too "
                         "noisy record by record to show a rise, but the whole run climbed")]
    rose = both_rose(run, loss)
    if rose is not None:
        step, first, end, ratio = rose
        return [_finding(run, smoothed, step, window, 0.7,
                         f"the validation loss rose from {first:.4g} to {end:.4g} (x{end / first:.1f}) with a "
                         f"steady upward trend, and the train loss's median rose x{ratio:.1f} with it: "
                         "too noisy record by record to show a climb, but both losses climbed")]
    ramped = climbed_as_rate_rose(run, loss, smoothed, start)
    if ramped is not None:
        step, level, end, factor = ramped
        return [Finding("divergence", LR_CAUSE, step,
                        f"the learning rate kept rising after the run's best ({level:.4g}), x{factor:.0f} by the end, "
                        f"and the loss climbed back with it to {end:.4g} (start {start:.4g}) and was still there at "
                        "the end: the learning rate is the cause", caused_by="lr", fix=FIX, experiment=EXPERIMENT,
                        lesson=LESSON)]
    thrown = thrown_back(run, loss, start)
    if thrown is not None:
        step, level, back, jump = thrown
        share = math.log(back / level) / math.log(start / level)
        return [Finding("divergence", LR_CAUSE, step,
                        f"the learning rate rose x{jump:.0f} at step {step} and the loss went from {level:.4g} to "
                        f"{back:.4g}, giving back {share:.0%} of what the run had learned (start {start:.4g}): "
                        "the learning rate is the cause", caused_by="lr", fix=FIX, experiment=EXPERIMENT,
                        lesson=LESSON)]
    jumped = jumped_back(loss, start)
    if jumped is not None and not val_unmoved(run, jumped[0]):
        step, level, back, end = jumped
        return [_finding(run, smoothed, step, window, 0.6,
                         f"from step {step} the train loss jumped from {level:.4g} to {back:.4g} (start "
                         f"{start:.4g}) and was still at {end:.4g} at the end, {end / level:.1f} x where it had "
                         "been: thrown out of the valley it had found, it never got back")]
    # Measured from where the run began when that is above ln K: a loss summing more than the cross-entropy
    # (a detector's objectness + box + class terms: 2 x ln 3 at its first records) that learned down to
    # ln K and swings about it has given back nothing it learned (two healthy outside runs, divergence
    # until 2026-12-07).
    relapsed = relapse(loss, opening_level(run, loss, start))
    if relapsed is not None:
        step, best, end = relapsed
        return [_finding(run, smoothed, step, window, 0.6,
                         f"train loss fell to {best:.4g}, then climbed back to {end:.4g} (start {start:.4g}) "
                         f"from step {step} and stayed there")]
    return []


def started_there(run, loss, smoothed, start: float, limit: float) -> bool:
    """Is the first record itself already above ``limit``, the rise limit of the untrained reference (ln K) -- but
    under ``BLOWUP`` x it -- with the smoothed loss never rising past the rise limit of that *first record*
    afterwards? Then the log shows no rise: the run started there.

    Why: a first record a few times ln K is what an overconfident initialisation scores (logits of a few
    units: a neural additive model at 3 x ln 2, its SGD rate 1e-6 so that it never moved), or a loss with
    more in it than the cross-entropy (a Bayesian network's ELBO adds its weights' KL: 4.3 x ln 4 from the
    first record on), or the first records of a logistic regression at a rate that makes it bounce -- as
    much as a blow-up between step 0 and the first record. The reference is there to catch a jump *after*
    the first record (4.6 at the first, 136 at the second: issue 15's second failure class), which this
    leaves alone; a blow-up before it beyond ``BLOWUP`` x (a rate far too high throwing the loss to 1,200)
    is still one. Three such runs of the outside sets were ``divergence`` until 2026-12-05; a matrix
    factorisation at Adam 0.5 from its first step, 2.1 x ln 2 at its first record and no higher after, is
    now the plateau it sits on (its author marked it ambiguous). The same exception as
    :func:`oscillation.bounce`'s."""
    first = float(loss.iloc[0])
    return limit <= first < signals.BLOWUP * start and \
        float(smoothed.max()) < rise_limit(run, loss, first)


def climbed_steadily(loss, smoothed) -> tuple[int, float, float, float] | None:
    """(step, opening, end, z) when the train loss's last fifth (median, ``end``) is ``CLIMB`` x its first
    fifth (``opening``) or more and the whole run trends up (Mann-Kendall z at least ``CLIMB_Z``, over at least
    ``CLIMB_RECORDS`` records); ``step`` is where the smoothed curve first passed half way up (on a log scale).
    None otherwise.

    Why: the rise limit is six noise units above the start, and a loss that swings 20-30 % from record to record
    puts it at 4-5 x the start -- a climb to 3.5 x never passes it for a sustained stretch. An outside Barlow
    Twins model whose Adam was built with ``maximize=True`` climbed 51 -> 190 over 250 steps, logged every 10,
    every record noisy: a ``loss_plateau`` ("0 % lower") until 2026-12-07. A trend test asks only whether later
    records tend to be higher, however noisy each one is -- the same question :func:`both_rose` puts to a
    validation loss, here for a log with none. Healthy runs do not climb through a whole run: over the 2,500
    healthy outside runs none did at z >= 3 to twice its first fifth (one -- an actor-critic's policy loss, which
    has no floor -- reached z 3.0 at 1.6 x), while 212 divergence runs and 43 gradient explosions did."""
    if len(loss) < CLIMB_RECORDS:
        return None
    fifth = max(2, len(loss) // 5)
    opening, end = float(loss.iloc[:fifth].median()), float(loss.iloc[-fifth:].median())
    if end < CLIMB * opening:
        return None
    trend = signals.trend_z(np.log(loss))
    if trend < CLIMB_Z:
        return None
    step = first_sustained(smoothed >= math.sqrt(opening * end), 1)
    return int(step if step is not None else loss.index[0]), opening, end, trend


def both_rose(run, loss) -> tuple[int, float, float, float] | None:
    """(step of the first evaluation, first val, end val, train ratio) when the validation loss (at least
    ``signals.TREND_EVALS`` evaluations) ended -- median of its last three -- at ``RISE`` x its first
    evaluation or more (and above the declared ln K too), with an upward Mann-Kendall trend (z at least
    ``TREND_Z``), while the train loss's second-half median stands at ``RISE`` x the median of its first 5 %
    or more; else None.

    Why: a train loss swinging +-50 % per record at batch 2 puts the rise limit (six noise units above
    one first record) out of reach -- an outside CBOW model at SGD with batches of two climbed 4.1 -> 10-20
    and was "oscillation". A fixed validation set has no sampling noise, and its steady climb is the clean
    evidence; the train loss's medians -- over dozens of records each, not one -- say it is no
    overfitting, whose train loss *falls* while its val loss climbs (0.0-0.5 x on every overfitting log
    cached, against 1.8-10^6 x for the climbs)."""
    val = signals.val_losses(run)
    if len(val) < TREND_EVALS or signals.trend_z(np.log(val)) < TREND_Z:
        return None
    first, end = float(val.iloc[0]), float(val.iloc[-3:].median())
    if end < RISE * max(first, reference_level(run, loss) if declared(run) else first):
        return None
    early = float(loss.iloc[:max(3, len(loss) // 20)].median())
    ratio = float(loss.iloc[len(loss) // 2:].median()) / early
    return (int(val.index[0]), first, end, ratio) if ratio >= RISE else None


def straight_to_nan(run, loss, exploded: int, sustained: int) -> bool:
    """Did the loss go non-finite fewer than ``sustained`` finite records after it blew up at ``exploded``?

    Why: the label vocabulary's ``divergence`` is a loss that climbs *without going non-finite*, so once the
    loss is NaN, ``nan_loss`` leads (``rules.CONSEQUENCES`` does not make it divergence's symptom). A run
    that climbed for a stretch before it overflowed has a climb worth reporting beside it, with the LR jump
    that started it; one that leapt from its level to NaN within a record or two showed no climb to read --
    the NaN is all the log shows, and ``nan_loss`` names the LR jump before it. Two outside authors,
    labelling logs of their own (an SGD momentum run whose LR rose 100x: one record at 1.7e16, then NaN; a
    Huber regression thrown to 5e4 for one record), called both ``nan_loss``."""
    first_nan = [s for s in run.nonfinite_steps(("train_loss",)) if s >= exploded]
    return bool(first_nan) and int((loss.index >= exploded).sum() - (loss.index >= first_nan[0]).sum()) < sustained


def thrown_back(run, loss, start) -> tuple[int, float, float, float] | None:
    """The first record where the learning rate rose ``LR_JUMP``-fold and the loss, over the stretch that
    followed (its median over ``max(3, 5 %)`` of the records), gave back at least ``GAVE_BACK`` of what the
    run had learned by then -- on a log scale, from the smoothed level before the jump to ``start``. Only for
    a run that had learned (``MIN_DROP`` below ``start``). Returns (step, level before, level after, LR
    factor) or None.

    Why: the loss rules above look for a loss that *stays* risen, and an LR schedule that decays the raised
    LR brings the run back; but a run thrown back to where it started at the very record its learning rate
    was multiplied was thrown back by that, whatever came after. A warm restart raises the LR as much, and
    on the benchmark's healthy restart runs gave back at most 66 % (most under 30 %)."""
    lr = positive_lr(run)
    if len(lr) < 2:
        return None
    factors = lr.to_numpy()[1:] / lr.to_numpy()[:-1]
    window, stretch = window_for(len(loss)), max(3, len(loss) // 20)
    for position in np.flatnonzero(factors >= LR_JUMP) + 1:
        step = int(lr.index[position])
        before, after = loss[loss.index < step], loss[loss.index >= step]
        if len(before) < 3 or len(after) < stretch:
            continue
        level, back = float(smooth(before, window).iloc[-1]), float(after.iloc[:stretch].median())
        learned = level <= start * (1 - MIN_DROP)
        if learned and math.log(back / level) >= GAVE_BACK * math.log(start / level) and \
                not relearned_at_raised_rate(loss, lr.loc[step:], level, window):
            return step, level, back, float(factors[position - 1])
    return None


def climbed_as_rate_rose(run, loss, smoothed, start) -> tuple[int, float, float, float] | None:
    """(step, best level, end level, LR factor) when the learning rate rose ``LR_JUMP``-fold or more between
    the run's best (the minimum of ``smoothed``, the loss's rolling median) and its end -- step by step, no
    record-to-record rise of ``LR_JUMP`` among them -- and the loss over the last ``max(3, 5 %)`` records gave
    back at least ``RAMP_GAVE_BACK`` of what the run had learned (on a log scale, from the best to ``start``);
    ``step`` is the first record after the best whose next ``max(3, 5 %)`` records have a median that far up.
    None otherwise.

    Why: a schedule bug that multiplies the rate a little every step (x1.01-1.03 per step, or a warm-up
    that never stops) has no jump for :func:`thrown_back` to read, and at first it helps -- a sentence
    classifier's loss fell from 0.9 to 0.11 while its SGD rate rose from 0.06 to 4 -- until the rate passes what
    the curvature allows and the loss climbs back as the rate keeps climbing: 0.11 -> 2.9 in its last 10 % of
    records. A sustained climb in the smoothed curve shows too late for the rules above, or never, when the
    loss ends below its start (a survival model 45 -> 61 against an untrained 66). Healthy runs raise the rate
    like this only in a warm-up, before their best; a warm restart after it is a single jump (and a restart's
    rise is :func:`thrown_back`'s to judge). Four runs of four outside sets, 2026-12-07, all ``divergence`` to
    their authors (``loss_plateau`` or ``healthy`` until then); no healthy log of the outside sets or the families
    has a rate 3 x its value at the run's best at the end (one, a restart schedule, 2.2 x).

    A network the ramp killed -- back at the untrained level and constant there -- is read here too: a rate
    still rising is its cause (``loss_plateau`` until 2026-12-07, when the kept outside sets held fourteen
    author-``divergence`` runs killed by a raised or ramped rate against two dead networks)."""
    lr = positive_lr(run)
    stretch = max(3, len(loss) // 20)
    best_step, best = smoothed.idxmin(), float(smoothed.min())
    if len(lr) < 5 or len(loss.loc[best_step:]) < 2 * stretch or best > start * (1 - MIN_DROP):
        return None
    at_best = lr[lr.index <= best_step]
    rate_at_best = float(at_best.iloc[-1]) if len(at_best) else float(lr.iloc[0])
    after = lr[lr.index >= best_step]
    factor = float(lr.iloc[-stretch:].median()) / rate_at_best
    if factor < LR_JUMP or len(after) < 2 or float((after.to_numpy()[1:] / after.to_numpy()[:-1]).max()) >= LR_JUMP:
        return None
    end = float(loss.iloc[-stretch:].median())
    mark = best * (start / best) ** RAMP_GAVE_BACK
    if end < mark:
        return None
    ahead = median_ahead(loss.loc[best_step:], stretch)
    return int(ahead[ahead >= mark].index[0]), best, end, factor


def relearned_at_raised_rate(loss, lr_after, level: float, window: int) -> bool:
    """Did the loss (rolling median over ``window`` records) get back below ``level``, where it was before
    the jump, while the learning rate was still at least ``plateau.LIVE_LR`` (half) of its raised value --
    the stretch from the jump to the first record where a schedule brought it lower?

    Why: a rate the run learns at is not too high for it. A warm restart (SGDR) early in a run that had
    learned little can throw the loss back to its start -- an outside shifted-window transformer, 1.20 -> 1.39
    at a restart from 3e-6 to 0.049 -- and then take it far below where it was at that same high rate
    (1.03 while the rate was still 0.040, 0.3 by the end): ``divergence`` at 0.9 until 2026-12-05. A rate that
    threw the weights out gets back below its old level only once a schedule has brought it down again."""
    raised = float(lr_after.iloc[0])
    high = lr_after[(lr_after >= LIVE_LR * raised).cummin()]
    during = smooth(loss.loc[lr_after.index[0]:high.index[-1]], window)  # the records after the jump only
    return bool(len(during)) and float(during.min()) < level


def jumped_back(loss, start) -> tuple[int, float, float, float] | None:
    """The first record where the loss jumped back: the median of the ``max(3, 5 %)`` records from there
    on gave back at least ``GAVE_BACK`` of what the run had learned by then (on a log scale, from the
    rolling median of the window of records before it to ``start``; only for a run that had learned by then,
    as :func:`plateau.relapse` asks: below :func:`plateau.learning_mark`) -- and the median of the last
    ``max(3, 5 %)`` records -- a stretch after the jump's own, not overlapping it -- still holds at least
    ``KEPT_BACK`` of that loss. Returns (step, level before, level after, level at the end) or None.

    Why: :func:`thrown_back` reads the same jump off a logged learning rate, and :func:`plateau.relapse` a
    run that gave it all back to the end; a learning rate raised in a log that does not record it throws the
    loss back at one record and then lets the run relearn, slowly, at the raised rate -- a date-format
    seq2seq at 0.008 thrown to 4.3 and ending at 0.69, a character LM at 1.79 thrown to 2.8 and ending at
    2.4 (outside sets, 2026-12-05: all ``healthy`` until then). Healthy runs do not jump back that far at
    once: none of the 1,400 healthy logs of 52 outside sets and the project's families has such a record
    (warm restarts gave back at most 66 % in the benchmark). The end keeps out a bounce that fell back,
    which is ``oscillation``'s, and a spike the run shrugged off; a jump in the last tenth of the log has no
    end of its own to judge, and is left alone (a distilled student whose batch-2 loss spiked over its last 8
    of 160 records, its last val loss back at its usual level: ``divergence`` until 2026-12-06). Confidence
    0.6: a dead network's (``loss_plateau``) or sorted data's (``no_shuffle``) jumps are claimed by those
    rules first."""
    window, stretch = window_for(len(loss)), max(3, len(loss) // 20)
    if len(loss) < window + stretch:
        return None
    before = loss.rolling(window, min_periods=window).median().shift(1)
    after = median_ahead(loss, stretch)
    gave = np.log(after / before) >= GAVE_BACK * np.log(start / before)
    hits = loss.index[(before <= learning_mark(loss, start)) & gave]  # learned by then, as relapse asks
    if len(hits) == 0:
        return None
    step = hits[0]
    if len(loss.loc[step:]) < 2 * stretch:
        return None  # the jump's own stretch reaches the end: nothing after it says whether it stayed
    level, back = float(before.loc[step]), float(after.loc[step])
    end = float(loss.iloc[-stretch:].median())  # the same stretch, at the end
    if math.log(end / level) < KEPT_BACK * math.log(start / level):
        return None  # came back down: a bounce (oscillation) or a spike the run shrugged off
    return int(step), level, back, end


def val_unmoved(run, step: int) -> bool:
    """Did the validation loss stay where it was across ``step``: the median of the evaluations after it (2 or
    more) at most ``1 + MIN_DROP`` x the median of the last 3 before it (2 or more)?

    Why: a run thrown out of the valley it had found is worse on any data -- its fixed validation set
    included. When the training loss jumps and the validation loss beside it does not, the jump is in how
    the training loss was measured: a triplet loss at batch 4 is exactly 0 on a third of its batches and
    anywhere in 0.01-2 on the rest, and the median of its non-zero records tripled over one stretch while
    the validation loss held at 0.37-0.45 (an outside set, 2026-12-06: ``divergence`` until then)."""
    val = signals.val_losses(run)
    before, after = val[val.index < step].iloc[-3:], val[val.index > step]
    if len(before) < 2 or len(after) < 2:
        return False
    return float(after.median()) <= (1 + MIN_DROP) * float(before.median())


def ramped_into(run, exploded) -> bool:
    """Did the loss blow up (``exploded``, the step :func:`signals.blew_up` found, or None) at a learning rate
    ramped ``LR_JUMP`` x or more above the run's first fifth (:func:`schedule.lr_ramp`)?

    Why it overrides a run that thrashed: swinging about its untrained level at a constant rate is
    ``oscillation``, but a rate raised step by step until the loss blew up and never came back is what threw
    it there -- an outside graph network at SGD with momentum, batch 2, swung +-18 % around ln 3 for 400
    steps, then an LR ramp x1.22 per 10 steps took it to x21 its start (``oscillation`` until 2026-12-05,
    ``divergence`` to its author)."""
    return exploded is not None and lr_ramp(run, exploded) >= LR_JUMP


def _finding(run, smoothed, step, window, score, evidence) -> Finding:
    """The finding, with the learning rate as its cause when the log shows it: a jump of ``LR_JUMP``-fold or
    more between where the climb began and ``step``, or a ramp that had raised it that much since the run's
    first fifth by the climb's start (:func:`schedule.lr_ramp`: an Adam rate multiplied by 1.007 per step,
    x130 by the time an expectile regression was thrown from 0.06 back to its untrained 0.43 -- no single
    jump, so the climb read as ``oscillation``'s bounce until 2026-12-05)."""
    onset = climb_start(smoothed, step)
    jump = lr_jump(run, onset, window, step)
    ramp = lr_ramp(run, onset) if jump < LR_JUMP else 0.0
    ramped = ramp >= LR_JUMP
    if jump >= LR_JUMP:
        evidence += f"; the learning rate rose x{jump:.0f} where the climb began (step {onset}): it is the cause"
    elif ramped:
        evidence += f"; the learning rate had been raised x{ramp:.0f} by step {onset}, where the climb began: it " \
                    "is the cause"
    if jump >= LR_JUMP or ramped:
        score, step = max(score, LR_CAUSE), onset
    return Finding("divergence", score, int(step), evidence, caused_by="lr" if jump >= LR_JUMP or ramped else "",
                   fix=FIX, experiment=EXPERIMENT, lesson=LESSON)

