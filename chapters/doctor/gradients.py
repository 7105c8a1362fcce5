"""``grad_explosion`` and ``vanishing_gradients``: the gradient norm leaves its normal range.

Explosion. Statistic: the total ``grad_norm`` (and each ``grad_norm/<group>``) against its own *baseline*,
the median of the first 20 % of its points. Threshold: a rolling median at ``EXPLODE`` x the baseline, or
one point at ``SPIKE`` x, or a norm that is written non-finite while the loss is still finite -- and the
norm still at ``EXPLODE`` x its baseline over the last fifth of the run (median). Why the last condition:
when the learning rate throws the weights out (``divergence``) the gradient norm bursts with the loss and
comes back down as the run settles or dies (in the benchmark, 0.2-4x the baseline at the end); gradients
that explode -- inputs that lost their normalisation, a recurrence with Jacobians above 1 -- stay
exploded (40-90,000x at the end). A burst that came back is reported by the loss rules --
unless it was at least ``SPIKE`` x the baseline and the learning rate did not jump there
(:mod:`chapters.doctor.schedule`): a hundredfold gradient with an unchanged learning rate was not caused by
the optimizer's settings; something fed the network inputs or activations far out of range, and whatever
the loss did next follows from that update -- except a network that then sits dead at the untrained
level (:func:`plateau.dead_network`), which that rule reports (its fix, clipping and a lower learning rate
so one bad step cannot switch every unit off, is the fix for the spike too). Conversely a
burst at the very records where the LR rose several-fold is the LR's doing: ``divergence`` reports it, not
this rule. And the norm must outgrow the loss (:func:`_outgrew_the_loss`): per unit of training loss it
must rise ``EXPLODE`` x too -- a norm that only kept pace with a climbing loss is the loss's symptom; when
both climbed, the finding says which grew by more orders of magnitude (:func:`_led_by`), and the ranking
puts that one first. One exception is read before all this (:func:`_shock`): loss and norm leaping twentyfold
together at one record and the run learning again from there, the norm staying up -- the gradients' scale
changed (inputs or targets out of their units), and the loss's leap is its consequence. And one read after
it (:func:`_accumulating`): a norm that lost its batch noise as it grew, by less than ``SPIKE`` x, is a
running sum of gradients never reset (``zero_grad`` missing) -- reported with that fix, after the finding
about what the loss did.
A per-group norm's baseline is at least the total norm's: a group that starts vanishingly small
(a deep sigmoid stack's first layer at 1e-7 of the total) and grows to a normal share is a layer waking
up, not an explosion. Why relative:
a healthy norm can be 0.1 or 50 depending on the model and the loss scale; what is never healthy is the norm
growing by an order of magnitude (Pascanu et al., 2013, "On the difficulty of training recurrent neural
networks", describe the mechanism: repeated multiplication by Jacobians with norm above 1).

Vanishing. Statistic: for logs with per-group norms, the median over the first 5 % of the records (at
least 5) of (smallest non-zero group norm / largest group norm) -- vanishing is a property of the network
as built (deep saturating stacks), there from the first step. Why the first records and no more: groups
drift apart later for other reasons -- a learning rate that throws the weights around grows the largest
group's norm a thousandfold and leaves the embedding looking starved (a thrashing encoder in the benchmark:
0.02 in its first 5 %, 4e-4 over its first third) -- while a starved layer that slowly wakes up still shows
what was built in its first records (1e-7 there, 7e-4 over the first third). A group that goes quiet only
after the loss blew up is a consequence too, so when the loss blew up (:func:`signals.blew_up`) before the
end of that first stretch the rule stays silent (an LR far too high saturates the network from the first
steps). Without per-group norms, the groups' *update ratios* (``update_ratio/<group>``). A total norm alone
shows no share: when it is gone altogether, no layer gets a gradient, and :func:`plateau.gradient_gone` names
the dead network.
Threshold: ratio below ``VANISH_RATIO`` (gradient norms) or, for update ratios, the smallest group below
``UPDATE_VANISH_RATIO`` of the *median* group (a group whose weights start at zero has an update ratio
near 1, so the largest group is no yardstick there). Why: when early layers get a small fraction of the
gradient of late ones, they do not learn (the same mechanism run the other way: Jacobians with norm below 1).
A group whose norm is exactly zero is frozen or dead, not vanishing: the frozen rule reports it.
When the first records show no such spread, one more reading (:func:`_vanished_later`): a group whose own norm
fell a hundredfold during training to under 1/256 of the largest group's, in a run that did not blow up --
units that training saturated.
And groups whose gradient went *exactly* to 0 after the run had learned (:func:`_went_silent`): float32's
rounding of a saturated derivative, which no share can be read off -- at a low confidence, since units a bad
update killed leave the same log.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01):
grad_explosion 11/12 top-1, vanishing_gradients 7/9 (the same with the first third; the first 5 % stopped
calling a thrashing encoder's drifting groups vanishing); all labels 218/243, 1/90 false alarms; fresh held-out
set (seeds 5-6 / 5): 93/111, 3/40 (docs/doctor.md).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chapters.doctor import log_density
from chapters.doctor.findings import Finding, confidence
from chapters.doctor.plateau import MIN_DROP, MOTIONLESS, at_floor, dead_network, gradient_gone, learned
from chapters.doctor.reference import RISE, blown_up_at
from chapters.doctor.schedule import climb_start, lr_raised
from chapters.doctor.signals import (BLOWUP, NOISE_UNITS, TREND_Z, factor, first_sustained, group_keys, head,
                                     median_ahead, noise_scale, reference_level, smooth, tail, trend_z, val_losses,
                                     window_for, zeros_to_the_end)

EXPLODE = 10.0
SPIKE = 100.0
EXPLODE_UNITS = 3.0  # ... and a sustained rise beyond three of the norm's own noise scales (explosion_factors)
# A sigmoid passes on at most a quarter of the gradient (its slope at 0), so four saturating layers at their
# steepest leave the first 1/256 of the last's. 1e-3 until 2026-12-05: a 7-layer sigmoid graph network at
# 2e-3 and a 6-layer sigmoid TabNet at 2.1e-3, both stuck at ln K, were plateaus; on twenty-four outside
# sets and the families no healthy run started under 1.2e-2 (a recommender's small layer does: STARVED).
VANISH_RATIO = 0.25 ** 4
# ... but between 1/256 and STARVED only in a run that is not learning (_starving_the_run): a recommender's
# small tower layer starts at 2-3e-3 of its embedding's norm in healthy runs, learning all the while.
STARVED = 1e-3
BYPASS_FLOOR = 1e-4  # ... and under this share no path around a group explains it (_bypassed)
# The same spread read off the update ratios (logs without per-group gradient norms), against the *median*
# group: a group whose weights start at zero (position embeddings, biases) has an update ratio near 1 while
# its norm is tiny, so the largest group is no yardstick there; and adaptive optimizers rescale every
# weight's step. Measured on the benchmark: healthy runs 0.02 and more, vanishing ones 2e-6 and less.
UPDATE_VANISH_RATIO = 1e-4
SILENT_CONFIDENCE = 0.45  # groups whose gradient went exactly 0: starved or dead, the log cannot say (_went_silent)
SHRUNK = 0.1  # smallest / largest group where no group gets a gradient: it shrank layer by layer (_shrank_everywhere)
STARVED_LATER = 100.0  # a group's own norm falling a hundredfold in training, to under VANISH_RATIO (_vanished_later)
KILLED_BACK = 1 / 3  # ... unless the loss gave back this share of what it had learned: units killed (_gave_back)
AWAKE_SHARE = 10.0  # x the vanishing bar: a share no starved layer reaches (_normal_share_at_times)
TOGETHER = 0.5  # correlation of log norm and log loss over the loss's climb: the norm rose with it (_led_by)
ESCAPE = 2.0  # the loss falling this many times faster once the norm took off: leaving a plateau
MIN_FALL = 0.1  # ... and by this much: a descent, not noise (_escaping_a_plateau)
SETTLED = 2.0  # a norm that less than doubled over the second half has stopped growing (_woke_up)
AWAKE_RECORDS = 5  # records before a climb: enough to see whether the norm was still growing (_awake_before)
# A loss scaler that skips a tenth of its steps is overflowing 200x as often as its design rate (one skip per
# 2,000 clean steps): the gradients are too large for float16 at any scale (skipped_steps).
MAX_SKIPPED = 0.1
FLOAT16_MAX = 65504.0  # float16's largest number: a scaled run's gradient norms sit far below it
# A leap of e^3 = 20x between the three records before one and the three from it, of the loss and the norm
# alike: no batch noise (a batch of two jumps 0.01 -> 0.3 for one record, not for three), a shock (_shock)
SHOCK = 3.0
ACCUMULATED = 0.2  # late / early record-to-record wobble of the log norm: a running sum (_accumulating)
RELEARN_Z = 3.0  # Mann-Kendall z of the loss after the shock: falling, far past the 5 % level (1.96)
LESSON = "docs/doctor.md#grad_explosion"


def check(run) -> list[Finding]:
    return (_shock(run) or _explosion(run)) + (_vanishing(run) or _vanished_later(run) or _went_silent(run) or
                                                _shrank_everywhere(run))


def _explosion(run) -> list[Finding]:
    worst = None
    total = run.curve("grad_norm")
    total = total[total > 0]
    floor = float(head(total, 0.05).median()) if len(total) >= 8 else 0.0
    for key in ["grad_norm", *group_keys(run.train, "grad_norm")]:
        norms = run.curve(key)
        norms = norms[norms > 0]
        if len(norms) < 8:
            continue
        baseline = head(norms, 0.05)
        base = max(float(baseline.median()), floor)
        later = norms.iloc[len(baseline):]  # growth is measured after the records the baseline comes from
        explode, spike_at = explosion_factors(norms)
        step = first_sustained(smooth(later, 3) >= explode * base, 2)
        spike = first_sustained(later >= spike_at * base, 1)
        if spike is not None and (step is None or spike < step):
            step = spike
        if step is None or lr_raised(run, step, window_for(len(norms))):
            continue  # nothing, or the learning rate jumped there: divergence
        if float(tail(norms, 0.2).median()) < explode * base and (spike is None or _died(run) or
                                                                 not _peak_outgrew_the_loss(run, norms)):
            continue  # rose tenfold and came back down: the symptom of a loss spike (divergence), not
            # gradients that keep exploding; or one spike that killed the network (loss_plateau); or a
            # hundredfold spike at the record the loss leapt by as much or more, the loss thrown out
            # (an LR raised 3000-fold: loss x640, norm x260 for one record, then back to 4x)
        if not _outgrew_the_loss(run, norms, len(baseline)):
            continue  # the norm grew with the loss, by no more: the loss's doing (_outgrew_the_loss)
        peak = float(norms.max())
        smoothed = smooth(norms, 3)  # one record is no peak
        under_spike = float(smoothed.max()) < SPIKE * base
        climb = climb_start(smoothed, step)  # where the norm's climb through EXPLODE x began
        if _within_its_working_level(norms, climb, explode, spike_at):
            continue  # awake before the climb, and the climb no bigger than the swings of that level
        if _woke_up(run, norms, step, climb, base) and (under_spike or _burst_carried_by_the_loss(run, norms, base)
                                                        or _untrained_until(run, climb)):
            continue  # grew from a tiny start to a level it keeps while the loss kept falling (_woke_up)
            # -- a hundredfold over three records is a spike, not a wake-up, unless the loss carried it or
            # the network had learned nothing yet (_untrained_until)
        if under_spike and _escaping_a_plateau(run, climb):
            continue  # the norm took off as the loss began to fall in earnest: a saddle left behind
        if _sharpening(run, climb) and _settled(norms) and not _leapt(smoothed, explode):
            continue  # a likelihood below zero, still falling: its gradients grew as its density sharpened
        if worst is None or peak / base > worst[0]:
            worst = (peak / base, key, int(step), base, peak, norms, len(baseline))
    loss_ok = ~(run.nonfinite["train_loss"] | run.nonfinite["val_loss"])
    written_inf = run.nonfinite["grad_norm"] & loss_ok
    if written_inf.any() and not skipped_steps(run):
        step = int(run.all_rows["step"][written_inf].iloc[0])
        if worst is None or step < worst[2]:
            return [_explode_finding(step, 0.8, f"the gradient norm is non-finite at step {step} while the "
                                                "loss is still finite")]
    if worst is None:
        return []
    ratio, key, step, base, peak, norms, first = worst
    if _accumulating(norms, step, ratio):
        return [_accumulated_finding(step, key, base, peak, ratio)]
    led_by = _led_by(run, norms, first, base, step)  # for the worst key only: the one the finding names
    return [_explode_finding(step, confidence(0.72, ratio / EXPLODE),
                             f"{key} grew from a baseline of {base:.3g} to {peak:.3g} (x{ratio:.0f}), "
                             f"above x{EXPLODE:.0f} from step {step}" +
                             (", no more than the loss grew: the loss carried it up" if led_by == "loss" else ""),
                             led_by)]


def _shock(run) -> list[Finding]:
    """Loss and gradient norm leaping twentyfold together at one record, at an unchanged learning rate --
    and the run learning again from there, still far above where it had been.

    Statistic: on a log scale, the median of the three records from each record on minus the median of the
    three before it, for the training loss and the total ``grad_norm`` at the same records; the record where
    the loss leapt most. Threshold: both leaps at least ``SHOCK`` (x20), the learning rate not raised there
    (:func:`schedule.lr_raised`), the loss after it falling (Mann-Kendall z at most -``RELEARN_Z`` over at least
    8 records) and at the end still more than half the leap above where it had been (smoothed, log scale) --
    having landed at ``BLOWUP`` x the untrained level or more (:func:`signals.reference_level`): a network that
    forgot what it learned lands about *at* that level (labels shuffled mid-run: x100 from 0.02 to ln K) --
    and the norm's median from the leap on still ``SHOCK`` x its level before: weights thrown out by a step
    too large (Adam's rate raised 3000-fold, not logged) carry one record of huge gradients, then the norm is
    back near its old level while the loss stays up; a scale that changed keeps the gradients large.

    Why this is the gradients' and not the loss rules': an optimizer whose steps are too large for the
    landscape keeps failing -- the loss climbs on, thrashes, or sits dead -- while this run descends again at
    the same learning rate from its new level. What changed at that record was the size of the gradients
    themselves: inputs or targets that lost their units, an aggregation that sums where it averaged. The
    loss leapt because the data's scale did, and normalising (and clipping) is the fix. Outside authors
    who scaled inputs or targets 20-1000x mid-run labelled all five such runs ``grad_explosion``; the norm,
    carried up no more than the loss was, had kept them ``divergence`` until 2026-12-06. The finding says
    the gradients led (``led_by``), so it is ranked above the divergence the leap also is."""
    loss, norms = run.curve("train_loss"), run.curve("grad_norm")
    loss = loss[loss > 0]
    both = pd.concat([np.log(loss), np.log(norms[norms > 0])], axis=1, join="inner").dropna()
    if len(both) < 12:
        return []
    log_loss, log_norm = both.iloc[:, 0], both.iloc[:, 1]
    before = both.rolling(3).median().shift(1)
    after = median_ahead(both, 3)
    leap = (after - before).dropna()
    if leap.empty:
        return []
    row = leap.iloc[:, 0].idxmax()
    loss_leap, norm_leap = float(leap.loc[row].iloc[0]), float(leap.loc[row].iloc[1])
    loss_before, norm_before = float(before.loc[row].iloc[0]), float(before.loc[row].iloc[1])
    if loss_leap < SHOCK or norm_leap < SHOCK or lr_raised(run, int(row), 2):
        return []
    if float(after.loc[row].iloc[0]) < math.log(BLOWUP * reference_level(run, loss)):
        return []  # back to about what an untrained model scores: a model that forgot, not a new scale
    since = log_loss.loc[row:]
    end = float(smooth(since, 3).iloc[-1])
    if len(since) < 8 or trend_z(since) > -RELEARN_Z or end < loss_before + loss_leap / 2:
        return []
    if float(log_norm.loc[row:].median()) < norm_before + SHOCK:
        return []  # the norm came back down: one record of huge gradients from weights thrown out (divergence)
    window = log_loss.loc[:row].iloc[-3:]  # the leap's record and the two before it
    past_half = window[window > loss_before + loss_leap / 2]
    row = past_half.index[0] if len(past_half) else row  # where the leap began: a climb over two records
    return [_explode_finding(int(row), 0.85,
                             f"at step {int(row)} the gradient norm leapt x{math.exp(norm_leap):.0f} and the train "
                             f"loss x{math.exp(loss_leap):.0f} together, at an unchanged learning rate, and from "
                             "there the loss fell again: the optimizer still works -- the gradients' scale "
                             "changed (inputs or targets out of their units?)", led_by="gradient")]


def explosion_factors(norms: pd.Series) -> tuple[float, float]:
    """How far above its baseline the norm must go to have exploded: ``EXPLODE`` x sustained and ``SPIKE`` x
    for one record -- or ``EXPLODE_UNITS`` and ``signals.NOISE_UNITS`` of the norm's own record-to-record
    noise on a log scale (:func:`signals.noise_scale`), when those are larger.

    Why the noise: a gradient norm measured on a batch of two swings by orders of magnitude from one
    record to the next -- a handful of examples decide it -- so ten times a baseline taken from a few such
    records is a draw, not a growth (outside mixture-of-experts classifiers at batch 2: norms jumping 0.01
    -> 11 between records, noise 2.0 log units, x1,700 at one record; ``grad_explosion`` until 2026-12-05,
    their authors' label ``oscillation``). On a norm that moves a few percent per record the noise bars are
    far below x10 and x100, and the old thresholds stand: the exploding runs of the outside sets grew 12-45
    noise units."""
    noise = noise_scale(np.log(norms))
    return max(EXPLODE, factor(EXPLODE_UNITS * noise)), max(SPIKE, factor(NOISE_UNITS * noise))


def skipped_steps(run) -> bool:
    """Are the non-finite gradient norms steps a loss scaler skipped, after which training carried on?

    Statistic: the logged ``grad_norm`` values in step order, and the loss's. Threshold: the log's last norm
    is finite, the loss is never written non-finite, the finite norms are of float16's size (median below
    ``FLOAT16_MAX``), and after the first finite norm at most ``MAX_SKIPPED`` of the norms are non-finite.
    Why: mixed-precision training in float16 multiplies the loss by a large scale so small gradients
    survive; when a step's gradients overflow, the scaler (``torch.amp.GradScaler``) skips that step -- the
    norm is written inf, the weights are untouched -- and halves the scale. It starts high on purpose, so
    the first few steps overflow while it calibrates, and it doubles again after every 2,000 clean steps,
    so one step in about 2,000 overflows for as long as the run lasts. Those infs are
    the scaler working (9 of 12 such constructed healthy runs were ``grad_explosion`` until 2026-12-02). An
    explosion does not carry on: the inf is followed by a NaN loss (the update wrote inf into the weights),
    or the log stops at it, or the scaler skips step after step because even a tiny scale overflows; and a
    norm that overflows float32 itself (above 1.8e19) sits among finite norms of 1e12-1e18, gradients no
    float16 run carries (a run thrown out before its first record, in the benchmark)."""
    norms = run.series("grad_norm").to_numpy()
    finite = np.isfinite(norms)
    if not finite.any() or not finite[-1] or run.nonfinite_steps() or np.median(norms[finite]) >= FLOAT16_MAX:
        return False
    after_calibration = ~finite[int(np.argmax(finite)):]
    return float(after_calibration.mean()) <= MAX_SKIPPED


def _led_by(run, norms: pd.Series, first: int, base: float, step: int) -> str:
    """Which drove the other: ``"gradient"`` when the norm grew by more orders of magnitude than the loss,
    ``"loss"`` when the loss grew by as many or more *and* the norm climbed with it
    (:func:`_climbed_together`), ``""`` when the log cannot say (the norm jumped and then held still). A
    loss that did not climb ``RISE`` x within the log at all, beside a norm that grew ``EXPLODE`` x, was
    outgrown: ``"gradient"`` (forgotten ``zero_grad()``: the norm piles up 1.5 -> 37 while Adam's steps
    take the loss from 2.2 back to 2.9 -- a relapse the loss rules see first, ``divergence`` first until
    2026-12-05; a loss thrown up before the log began is measured from where the log found it, as the
    norm is). Growth is the peak (rolling median of 3 records: one
    record is no peak) over the level in the baseline's ``first`` records, on a log scale -- or, when the
    loss had come down by the time the norm took off, over the three records before ``step`` (both).
    :func:`rules.rank <chapters.doctor.rules.rank>` lists the driver first, whichever moved first.

    Why sizes rather than onsets: an update follows the gradient, so the norm moves a record or more before
    the loss whichever of them drove the other. A loss carried far from its minimum has gradients of its
    own size at most -- a cross-entropy's gradient is a difference of probabilities, a squared error's grows
    as its square root -- so a weight vector thrown out lifts the loss by as many orders of magnitude as the
    norm or more. Gradients that explode on their own (a recurrence with Jacobians above 1, a loss scale out
    of control: Pascanu et al., 2013) outgrow the loss they come from. On the independent logs
    (2026-12-03), of the 10 labelled divergence that named both, 7 read ``"loss"`` (four of them were
    ``grad_explosion`` until then, the norm having moved first) and 2 ``"gradient"``; all 6 labelled
    grad_explosion read ``"gradient"`` (one was ``divergence`` until then: its loss crept up first, 3-fold,
    its norm 27-fold), and so do the benchmark families' 9. "More" means by more than ``RISE`` x: a norm
    and a loss that both leapt a hundredfold at one record (x125 and x110: a mixture-of-experts net at SGD
    0.5, batch 2, bouncing) grew together, and the norm's hair ahead named it ``grad_explosion`` until
    2026-12-05; the exploding runs of four new outside sets led by 0.8-16 (natural log units)."""
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    loss_start = float(loss.loc[:norms.index[max(first, 1) - 1]].median()) if len(loss) >= 8 else math.nan
    if not loss_start > 0:  # too few losses, or none beside the baseline's records
        return ""
    loss_peak = float(smooth(loss, 3).max())
    if loss_peak < RISE * loss_start:
        return "gradient"  # the norm grew tenfold (the finding's threshold), the loss not even 1.5-fold
    norm_peak = float(smooth(norms, 3).max())
    norm_growth, loss_growth = math.log(norm_peak / base), math.log(loss_peak / loss_start)
    loss_before, norm_before = loss[loss.index < step].iloc[-3:], norms[norms.index < step].iloc[-3:]
    if len(loss_before) and len(norm_before) and float(loss_before.median()) < loss_start:
        # A run that learned before the take-off climbs from its low, not from its untrained start: both
        # growths from the records just before ``step`` (a loss at 0.17 thrown to 10,000 grew 11 orders of e,
        # its norm 0.2 -> 1,170 grew 9 -- measured from the start, 0.32 and 0.03, the norm "led")
        norm_growth = math.log(norm_peak / float(norm_before.median()))
        loss_growth = math.log(loss_peak / float(loss_before.median()))
    if norm_growth > loss_growth + math.log(RISE):  # ahead by more than a tie: RISE x, the loss rules' own bar
        return "gradient"
    return "loss" if _climbed_together(norms, loss, step) else ""


def _climbed_together(norms: pd.Series, loss: pd.Series, step: int) -> bool:
    """Did the norm rise *with* the loss: from ``step`` (where it passed ``EXPLODE`` x) to the loss's peak, do
    the two (logarithms, rolling medians of 3) correlate at ``TOGETHER`` or more, over at least 3 records?

    Why: a norm that jumped and then held still while the loss climbed on was not carried by it -- inputs
    thrown out of range multiply the gradients once, and the loss that follows climbs by itself."""
    smoothed = np.log(smooth(loss, 3))
    both = pd.concat([np.log(smooth(norms, 3)), smoothed], axis=1, join="inner").loc[step:smoothed.idxmax()]
    return len(both) >= 3 and float(both.iloc[:, 0].corr(both.iloc[:, 1])) >= TOGETHER


def _accumulating(norms: pd.Series, step: int, ratio: float) -> bool:
    """Is the norm a running sum of gradients: grown less than ``SPIKE`` x, and wobbling from record to record
    over the second half of its time above the bar by at most ``ACCUMULATED`` of what it wobbled before
    ``step`` (robust scales of the log norm, :func:`signals.noise_scale`; four records each at least)?

    Why: a gradient that is never zeroed (``optimizer.zero_grad()`` dropped in a refactor, an optimizer built
    over a stale copy of the model) is added to at every step, so what is logged is the sum of every batch's
    gradient since the last reset: it climbs in a straight line, or up to where the model swings about it,
    and each new batch changes it by a sliver -- batch noise of +-20-70 % before, 0.02-1 % after, in six
    outside runs by five authors. A gradient that explodes is one step's gradient, as noisy as the batches
    that make it. Five of those six runs their authors named by what the loss did (a plateau, a climb,
    swings), not by the norm, 13-84 x up (the sixth, ``grad_explosion``); so the finding gives way to the
    loss's (``led_by = "loss"``: ``rules.rank`` lists it after them). Past ``SPIKE`` x it is an explosion
    whatever made it (a never-zeroed sum unclipped for a thousand steps: 10^16 x, its author's
    ``grad_explosion``)."""
    if ratio >= SPIKE:
        return False
    before, after = np.log(norms[norms.index < step]), np.log(norms[norms.index >= step])
    late = after.iloc[len(after) // 2:]
    if len(before) < 4 or len(late) < 4:
        return False
    return noise_scale(late) <= ACCUMULATED * noise_scale(before)


def _accumulated_finding(step: int, key: str, base: float, peak: float, ratio: float) -> Finding:
    return Finding("grad_explosion", 0.6, step,
                   f"{key} grew from a baseline of {base:.3g} to {peak:.3g} (x{ratio:.0f}) from step {step}, and "
                   "lost its batch noise on the way: it is a running sum of gradients, never reset -- the loss's "
                   "finding says what that did to the run",
                   led_by="loss",  # the loss's finding goes first (rules.rank)
                   fix="call optimizer.zero_grad() once per step, before backward(); build the optimizer over "
                       "the model's own parameters (not a copy)",
                   experiment="log grad_norm for 20 steps right after zero_grad(): it should jump about with the "
                              "batches, not climb",
                   lesson=LESSON)


def _explode_finding(step, score, evidence, led_by: str = "") -> Finding:
    return Finding("grad_explosion", score, step, evidence, led_by=led_by,
                   fix="clip the gradient norm (1.0), lower the learning rate, add warmup; check the "
                       "initialisation scale and the normalisation layers",
                   experiment="log grad_norm per group and find the group that grows first; re-run with "
                              "clipping and compare",
                   lesson=LESSON)


def _vanishing(run) -> list[Finding]:
    # The gradients themselves when they were logged per group (the updates add nothing to them), else the
    # updates.
    if len(group_keys(run.train, "grad_norm")) >= 2:
        prefix, limit, yardstick = "grad_norm", VANISH_RATIO, "max"
    else:
        prefix, limit, yardstick = "update_ratio", UPDATE_VANISH_RATIO, "median"
    ratio, table = early_spread(run, prefix, yardstick)
    # Five records -- or every record in which two groups still had a gradient, three at least: a sigmoid
    # stack whose early layers got 1e-8 of the head's norm, then exactly 0 (float32 underflow) from its
    # fifth record on, left four (an outside PointNet, 2026-12-04: called a plateau until then).
    enough = len(ratio) >= 5 or 3 <= len(ratio) == len(table)
    if enough and float(ratio.median()) < limit and not _blew_up_by(run, ratio.index[-1]) and \
            not _normal_share_at_times(ratio, limit) and _starving_the_run(run, float(ratio.median()), prefix) and \
            not (prefix == "grad_norm" and _bypassed(table.loc[ratio.index], table, limit)):
        medians = table.median()
        weakest = medians.idxmin()
        strongest = medians.idxmax() if yardstick == "max" else "the median group"
        value = float(ratio.median())
        first = int(run.train.loc[ratio.index[0], "step"])
        return [_vanish_finding(first, confidence(0.78, limit / max(value, 1e-30)),
                                f"{weakest} is {value:.1e} of {strongest} (median over {len(ratio)} "
                                f"records; below {limit:g})")]
    return []


def _vanished_later(run) -> list[Finding]:
    """A group whose *own* gradient norm fell ``STARVED_LATER`` x or more -- median of its first fifth of the
    records with two live groups to the median of its last 30 % -- and ends with under ``VANISH_RATIO`` of the
    largest group's (medians of that last 30 %), in a run whose loss did not blow up.

    Why beside the first records' spread (:func:`_vanishing`): that reads what was built; training can starve
    a layer too, when its pre-activations grow until the saturating units behind them stop passing anything
    back -- an outside word2vec whose embedding went through ``tanh(1500 u)`` from step 180 (0.2 of the
    output vectors' norm, then 3e-5), a ViT without residuals whose first blocks sank from 1e-2 of the head's
    norm to 1e-4 over the run: both healthy until 2026-12-06. Why the group's own fall, not its share alone:
    a share also shrinks when the *largest* group grows -- a learning rate that throws the weights about
    lifts the head's norm a thousandfold and leaves the embedding's looking starved (a thrashing encoder in
    the family benchmark) -- while a starved layer's own gradient goes. Why no blow-up: units that a climbing
    loss saturated are that climb's consequence (every family divergence whose embedding's gradient fell
    like this blew up first). On the twenty outside sets and the benchmarks, no healthy run's group fell
    thirtyfold to under 1/256."""
    if blown_up_at(run) is not None:
        return []
    _, table = early_spread(run, "grad_norm")  # live groups only: a frozen or dead one is the frozen rule's
    if len(table) < 10:
        return []
    early = table.iloc[:max(3, len(table) // 5)].median()
    late = table.iloc[-max(3, int(0.3 * len(table))):].median()
    share = (late / late.max()).dropna()
    if share.empty:
        return []
    weakest = share.idxmin()
    fell = float(early[weakest] / late[weakest])
    if not (share[weakest] < VANISH_RATIO and fell >= STARVED_LATER):
        return []
    norm = table[weakest].dropna()
    below = first_sustained(smooth(norm, 3) <= early[weakest] / math.sqrt(STARVED_LATER), 2)
    step = int(run.train.loc[below if below is not None else norm.index[-1], "step"])
    if _gave_back(run, step):
        return []  # the update that threw the loss back up killed the units: a dead network, loss_plateau's
    return [_vanish_finding(step, confidence(0.7, VANISH_RATIO / max(float(share[weakest]), 1e-30)),
                            f"{weakest} fell from {early[weakest]:.2g} to {late[weakest]:.2g} (x{fell:.0f} down) "
                            f"during the run and ends at {share[weakest]:.1e} of {late.idxmax()}: its units "
                            "saturated while training went on")]


def _shrank_everywhere(run) -> list[Finding]:
    """No weight gets a gradient (:func:`plateau.gradient_gone`: total norm under 1e-6, and under it per unit
    of loss), every logged group still gets *some*, and the smallest group's median norm is under ``SHRUNK``
    (a tenth) of the largest's.

    Why a tenth and not ``VANISH_RATIO``: the share rule asks whether some layers starve beside others that
    learn; here none learns, and the question left is *how* the signal was lost. A network cut off at its
    top -- outputs saturated, or every unit of one layer switched off -- passes the same nothing to every
    layer below (outside sigmoid encoders that collapsed, their blocks within 1.7x of each other) or exactly
    0 past the dead layer (dead-ReLU nets, a group at 0: the frozen and plateau rules read those). A deep
    saturating stack loses the signal a little at every layer, so the groups fan out by depth: 10- and
    12-layer sigmoid MLPs at 1e-7 to 1e-10 in all, their first layers 11-35x below the largest group -- each
    labelled ``vanishing_gradients`` by its author, and a dead network (``loss_plateau``) here until
    2026-12-07."""
    total, keys = gradient_gone(run), group_keys(run.train, "grad_norm")
    if total is None or len(keys) < 2:
        return []
    medians = run.train[keys].astype(float).median()
    if not (medians > 0).all():
        return []  # a group at exactly 0: cut off past a dead layer, not shrunk on the way
    share = float(medians.min() / medians.max())
    if share >= SHRUNK:
        return []
    first = run.train["step"][run.train[keys].notna().any(axis=1)].iloc[0]
    return [_vanish_finding(int(first), 0.7, f"no layer gets a gradient (total norm {total:.1e}), and "
                                            f"{medians.idxmin()} gets {share:.1e} of {medians.idxmax()}: the "
                                            "signal shrank layer by layer through a saturating stack")]


def _went_silent(run) -> list[Finding]:
    """Groups whose gradient norm was live on the first record and is exactly 0 from some record to the end,
    over half of the records (three at least), while another group keeps a gradient to the end -- in a run
    that had learned before the silence began (:func:`plateau.learned`, from the untrained reference, its
    smoothed best up to there) and did not give it back (:func:`_gave_back`), whose loss did not blow up and
    whose learning rate was not raised before (:func:`schedule.lr_raised`). Not when every silent group sits
    between live ones in the log's order, and not when a silent group's update ratio stopped at the same
    record (:func:`_stopped_with_it`).

    Why: saturating units pass back *exactly* nothing once float32 rounds their derivative to 0 (tanh of an
    argument past ~9 is 1.0 exactly), so a layer starved by saturation leaves a gradient of 0 in the log,
    which the share-based readings (:func:`_vanishing`, :func:`_vanished_later`) cannot divide by. An outside
    KAN squashed by tanh(20 h) between layers learned 1.03 -> 0.48 in ten steps, then its four lower layers
    got exactly 0 for the rest of the run while the loss sat at 35 x its floor: ``healthy`` until 2026-12-07,
    as was a word2vec embedding behind tanh(1000 u). On 116 outside sets no healthy run has a group go
    silent like this. Why the conditions: a network killed by one bad update (a learning rate raised, a
    loss that blew up or gave back what it had learned) dies the same way -- a dead network, ``loss_plateau``
    and ``divergence``'s; so does one that never learned (nothing was starved: nothing moved). A group silent
    only between live ones is one the gradient goes around (:func:`_bypassed`: a U-Net's bottleneck beside its
    skips went silent in two outside runs that trained on). A group taken out of the optimizer stops its
    update at once, where a starved one keeps stepping on its momentum for a while: that is the frozen
    rule's. Why a low confidence (``SILENT_CONFIDENCE``): ReLUs killed *after* the run learned leave the same
    log -- of the four outside runs it names, two were starved and two dead networks -- so any other
    reading of the log (a loss stuck far above its floor, ``loss_plateau``) ranks first."""
    keys = group_keys(run.train, "grad_norm")
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(keys) < 2 or len(loss) < 8 or blown_up_at(run) is not None:
        return []
    table = run.train[keys].astype(float).dropna(how="all")
    live = table.fillna(-1.0) != 0.0  # a missing record is no evidence of silence
    silent = {}
    for key in keys:
        alive = live[key].to_numpy()
        start = zeros_to_the_end(~alive)
        if alive[0] and start is not None and len(alive) - start >= max(3, len(alive) // 2):
            silent[key] = table.index[start]
    if not silent or len(silent) == len(keys) or not live.drop(columns=list(silent)).iloc[-1].any():
        return []
    if not {keys[0], keys[-1]} & set(silent):
        return []  # silent only between live groups: the gradient goes around them (_bypassed)
    step = int(run.train.loc[min(silent.values()), "step"])
    before = smooth(loss, window_for(len(loss)))[loss.index <= step]
    if before.empty or not learned(loss, reference_level(run, loss), float(before.min())) or \
            _gave_back(run, step) or lr_raised(run, step, len(run.curve("lr"))):
        return []  # never learned, or killed by a bad update: a dead network, loss_plateau's
    if any(_stopped_with_it(run, key, row) for key, row in silent.items()):
        return []  # taken out of the optimizer: the frozen rule's
    names = ", ".join(key.split("/", 1)[1] for key in silent)
    return [_vanish_finding(step, SILENT_CONFIDENCE,
                            f"the gradient of {names} is exactly 0 from step {step} to the end, after the run had "
                            "learned: its units saturated, and float32 rounds what they pass back to nothing")]


def _stopped_with_it(run, key: str, row) -> bool:
    """Did the group's update ratio (``update_ratio/<group>``, when logged) go to exactly 0 at ``row``, where
    its gradient did? An optimizer steps a starved parameter on its momentum for a while; one it no longer
    holds (``requires_grad=False``, left out of its groups) stops at once."""
    update = "update_ratio/" + key.split("/", 1)[1]
    if update not in run.train:
        return False
    return float(run.train.loc[row, update]) == 0.0


def _gave_back(run, step: int) -> bool:
    """Did the train loss end (median of its last 30 %) above its best before ``step`` (the smoothed minimum)
    by ``KILLED_BACK`` or more of what it had learned by then (from the untrained reference)?

    Why it takes the finding from :func:`_vanished_later`: a layer that training starved stops passing
    gradient while the loss carries on or settles where it was. A bad update -- a learning rate too high --
    throws the loss up and switches the units off at once; their gradient then decays to nothing while the
    loss sits *above* where it had been: outside VQ-VAEs at Adam 0.015-0.05, which had learned 0.96-0.91 of
    a start of 1.1-1.2 and sat at 1.04 after the spike (41-61 % given back) -- dead networks to their author,
    ``vanishing_gradients`` until 2026-12-07. The two starved runs of the outside sets ended below their best
    before the fall."""
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < 8:
        return False
    before = smooth(loss, window_for(len(loss)))[loss.index < step]
    if before.empty:
        return False
    best, late = float(before.min()), float(loss.iloc[-max(3, int(0.3 * len(loss))):].median())
    learned_by_then = reference_level(run, loss) - best
    return learned_by_then > 0 and late - best >= KILLED_BACK * learned_by_then


def _starving_the_run(run, share: float, prefix: str) -> bool:
    """Is a gradient share of ``share`` (of the largest group's norm) evidence that the run is starved: below
    ``STARVED`` (1e-3) always, and up to ``VANISH_RATIO`` (1/256) only when the training loss never learned
    (:func:`plateau.learned` from the untrained reference)? Update ratios have their own bar and are not
    judged here.

    Why two bars: a share is measured per *group*, and a group's norm grows with its size -- a small layer
    among large ones has a small norm without being starved of anything. Between 1/256 and 1/1000 the size
    alone can explain the share (an outside neural recommender: its 8-unit tower layer at 2-3e-3 of its
    embedding tables' norm in four healthy runs, ``vanishing_gradients`` until 2026-12-05), and the loss
    decides: a deep sigmoid stack starved that much sits at ln K (a graph network and a TabNet at 2e-3, both
    stuck). Under 1/1000 no healthy run of the twelve sets DA-DL or of the families was named. A run at its
    declared floor learned too (:func:`plateau.at_floor`), though its loss fell less than ``MIN_DROP``: a
    floor high above zero leaves little to fall -- an outside Glow-style flow, 6.18 -> 5.68 bits per
    dimension against 5.26, its coupling layers below a zero-initialised output at 1.5e-3 of the largest
    group's norm in its first records (waking as that layer grew), was ``vanishing_gradients`` until
    2026-12-07."""
    if prefix != "grad_norm" or share < STARVED:
        return True
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < 8:
        return True
    best = float(smooth(loss, window_for(len(loss))).min())
    return not (learned(loss, reference_level(run, loss), best) or at_floor(run, loss))


def _bypassed(early: pd.DataFrame, whole: pd.DataFrame, limit: float) -> bool:
    """Is the starved group one the gradient goes around: the only group whose share of the largest group's
    gradient norm (median over the ``early`` records) is below ``limit``, with groups above it logged on
    both sides of it -- neither the first nor the last group of the log that has a gradient at all?

    Why: gradients vanish along a chain. Each saturating layer passes on a fraction of what it got, so the
    shares fall by a steady factor layer after layer towards the input -- in every vanishing run of sixteen
    outside sets with more than two groups, every group between the weakest and the input was starved too
    (a sigmoid stack logged as embed, block0..block9, head: 5e-18, 2e-16, ... 4e-01, 1). One starved group
    with well-fed groups on both sides of it has a path around it that carries the gradient on to the
    groups beyond: a U-Net's bottleneck beside its skip connections (2e-4 to 7e-4 of the head's norm while
    the encoder before it gets 0.1-1: five healthy outside U-Nets were ``vanishing_gradients`` until
    2026-12-06), a recommender's matrix-factorisation branch beside its MLP tower. Logs list their groups in
    the order the model builds them (``named_parameters``), input to output, so "both sides" means "the
    input side too", whichever end the input is at; a group first or last in the log may be the input's own,
    and stays judged.

    Not under ``BYPASS_FLOOR`` (1e-4): a skip connection carries the gradient *past* a group, not into it,
    and the bypassed groups of healthy runs get a share of 2e-4 and more. A group at 1e-5 to 1e-10 of the
    largest gets nothing, whatever the gradient does around it -- and a log need not list its groups in build
    order (an outside tagger's sorted alphabetically, crf, embedding, proj, rnn: its embedding at 6e-6, scaled
    down by a bug, was "bypassed" until 2026-12-07, as were a speaker encoder at 1e-8 and a seq2seq encoder at
    4e-5). Nor when the group's share over the whole run (median, ``whole``) is under it: a bypassed group
    keeps its share while the run trains, and a saturating one loses it -- an outside ordinal CNN logged
    head, conv, fc had its conv at 2e-4 of the head over its first records and 1e-8 after (a plateau
    until 2026-12-07)."""
    shares = early.div(early.max(axis=1), axis=0).median().dropna()  # a group with no gradient has no place
    starved = np.flatnonzero((shares < limit).to_numpy())
    if not (len(starved) == 1 and 0 < starved[0] < len(shares) - 1):
        return False
    group = shares.index[starved[0]]
    over_the_run = float(whole[group].div(whole.max(axis=1)).median())
    return min(float(shares.iloc[starved[0]]), over_the_run) >= BYPASS_FLOOR


def _normal_share_at_times(ratio: pd.Series, limit: float) -> bool:
    """Did the weakest group get a normal share -- ``AWAKE_SHARE`` x ``limit`` or more of the yardstick --
    in at least a quarter of the records ``ratio`` covers?

    Why: vanishing is built into the network (saturating layers stacked deep), so a starved layer is starved
    on every batch; its share moves by a factor of a few around a tiny level. A layer whose share jumps from
    2e-1 to 6e-5 and back between records is being knocked about -- a softmax gate saturated by steps far too
    large for a batch of two, in an outside mixture-of-experts net at RMSprop 0.03 (``vanishing_gradients``
    until 2026-12-05, an ``oscillation`` run to its author). The first records only, as the rule reads them:
    a deep sigmoid stack's early layers can recover a normal share later in the run (an outside graph
    network: 1e-5 at first, then waking), and that recovery does not undo what was built."""
    return float((ratio >= AWAKE_SHARE * limit).mean()) >= 0.25


def early_spread(run, prefix: str, yardstick: str = "max") -> tuple[pd.Series, pd.DataFrame]:
    """(smallest non-zero group / ``yardstick`` group, "max" or "median") of ``prefix``'s groups
    (``grad_norm/<group>`` or ``update_ratio/<group>``) on each of the run's first records -- 5 %, at least
    5 -- and the table of the groups' values (zeros as NaN: a frozen or dead group is left out; infinities
    too: a value that overflowed measures no spread). Empty without two groups."""
    keys = group_keys(run.train, prefix)
    if len(keys) < 2:
        return pd.Series(dtype=float), pd.DataFrame()
    table = run.train[keys].astype(float)
    table = table.where(np.isfinite(table) & (table != 0.0))
    table = table[table.notna().sum(axis=1) >= 2]
    ratio = (table.min(axis=1) / table.agg(yardstick, axis=1)).dropna()
    return ratio.iloc[: max(5, len(ratio) // 20)], table


def updates_vanish(run) -> bool:
    """Is the smallest group's update ratio below :data:`UPDATE_VANISH_RATIO` of the median group's, from
    the first records on (:func:`early_spread`)? Then a group whose update is exactly 0 is the bottom of
    that attenuation, its updates rounded to nothing in float32, rather than a frozen group."""
    ratio, _ = early_spread(run, "update_ratio", "median")
    return len(ratio) >= 5 and float(ratio.median()) < UPDATE_VANISH_RATIO


def _outgrew_the_loss(run, norms: pd.Series, first: int) -> bool:
    """Did the norm grow faster than the training loss: the norm *per unit of loss* (the two at the same
    records) rising ``EXPLODE`` x above its median over the first ``first`` records -- sustained over two
    smoothed records, or one record at ``SPIKE`` x? True when fewer than eight records hold both.

    Why: a loss far from its minimum has large gradients -- a cross-entropy's gradient is the gap between
    the predicted and the true distribution, a squared error's the residual -- so a norm that grew as the
    loss did was carried up by it: the loss climbing (``divergence``: a sign flipped to gradient ascent took
    a ResNet's loss 25-fold up and its norm 15-fold) or a network that died from a near-zero loss (a
    bag-of-words classifier at 0.001 jumped to ln 6 and sat there; its norm, 0.003 while it was that sure,
    grew 80-fold to the output bias's). Both were ``grad_explosion`` until 2026-12-03. Gradients that explode
    on their own outgrow the loss: a loss scale doubling every few steps leaves the loss where it was and
    multiplies the norm a thousandfold."""
    loss = run.curve("train_loss")
    both = pd.concat([norms, loss], axis=1, join="inner").dropna()
    both = both[(both.iloc[:, 0] > 0) & (both.iloc[:, 1] > 0)]
    if len(both) < 8:
        return True
    per_unit = both.iloc[:, 0] / both.iloc[:, 1]
    base = float(per_unit.iloc[:max(first, 1)].median())
    later = per_unit.iloc[first:]
    return first_sustained(smooth(later, 3) >= EXPLODE * base, 2) is not None or bool((later >= SPIKE * base).any())


def _woke_up(run, norms: pd.Series, step: int, climb: int, base: float) -> bool:
    """Did the norm settle at its new level while the run went on learning: over the second half of the
    run it less than doubled (the median of that half's last quarter over its first quarter's: ``SETTLED``),
    and the training loss over the last fifth is below its median around ``step`` (where the norm passed
    ``EXPLODE`` x) *and* around ``climb`` (where that climb began)? The second because the climb can throw
    the loss up before the norm is tenfold: ``zero_grad()`` dropped mid-run under RMSprop, the loss went
    0.49 -> 0.85 as the gradients piled up and settled at 0.57, below its peak but above where it was
    (an outside Student-t regression, healthy until 2026-12-05). Or, for a norm that grew slowly and passed
    ``EXPLODE`` x only near the end, where the loss has no records left to fall in: the loss over the last
    fifth ``plateau.MIN_DROP`` below its level where the norm was halfway there on a log scale (sqrt of
    ``EXPLODE`` x ``base``: :func:`_fell_while_growing`).

    Why: a network whose weights start near zero -- word2vec's output vectors, a zero-initialised head --
    has almost no gradient at first; the norm grows as the weights do and levels off at its working size
    (a skip-gram model trained with SGD: 0.008 -> 0.12 over its first third, 0.11 -> 0.13 over its second
    half, the loss falling from 4.2 to 2.4 all along: ``grad_explosion`` until 2026-12-03). Not a trend
    test: over 125 records a drift of 15 % is significant, and no explosion. Gradients that explode keep growing
    (a loss scale doubling every few steps), or jump a hundredfold and more (``SPIKE``, not excused here:
    over a rolling median of 3, because one record that far out beside a working level is a hard batch --
    a LayerNorm DenseNet memorising its images, its norm 0.27 at the start, 2-10 later and once 29, while
    its loss fell from 1.8 to 0.01, was ``grad_explosion`` until 2026-12-03), or throw the loss up.
    And a norm that was already awake before its ``climb`` began cannot wake up: see :func:`_awake_before` --
    unless it sat at a saddle, not at a working level (:func:`_left_the_saddle`)."""
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    at_climb, at_step = loss[loss.index <= climb].iloc[-3:], loss[loss.index <= step].iloc[-3:]
    if len(loss) < 8 or at_step.empty:
        return False
    end = float(tail(loss, 0.2).median())
    if _awake_before(norms, climb) and not _left_the_saddle(run, loss, climb, end):
        return False
    before = min(float(at_step.median()), float(at_climb.median()) if len(at_climb) else math.inf)
    return _settled(norms) and (end < before or _fell_while_growing(loss, norms, base, end))


def _left_the_saddle(run, loss: pd.Series, climb: int, end: float) -> bool:
    """Had the training loss learned nothing before the norm's ``climb`` (:func:`_untrained_until`) and stood
    motionless there (three records at least, every batch scoring the same to ``plateau.MOTIONLESS``, 0.1 %,
    of the log loss: :func:`signals.noise_scale`), and did it then learn: its last fifth (``end``, median)
    ``plateau.MIN_DROP`` below the untrained reference (:func:`signals.reference_level`)?

    Why: a norm that holds one level before its climb was awake (:func:`_awake_before`) -- *if* the network
    was working there. A network initialised at a saddle -- a pointer network whose attention scores every
    position alike, the loss at ln 8 for its first two dozen steps -- holds a flat, tiny norm (0.001) because
    nothing has started to move; when it finds the way down, the norm grows a thousandfold to its working
    level while the loss falls to a tenth (an outside healthy run at SGD 0.5, ``grad_explosion`` until
    2026-12-07). Why the loss must learn: a net stuck at ln 10 whose inputs jumped a thousandfold (a data
    source in millimetres) also had a flat norm before the climb and ends a hair below ln 10 -- exploded,
    then dead. Why motionless: a saddle's prediction is the same for every input, and it scores the same on
    every batch (ln K to the fifth decimal, in that pointer network); a network at work scores each batch
    differently, however little it has learned yet -- ``zero_grad()`` dropped under Adam took a norm that
    sat at 0.25 for fifteen records, the loss swinging 2 % a record on its way down, to 25 in four (an
    outside ordinal regression: exploded, see :func:`_awake_before`)."""
    before = loss[loss.index < climb]
    return len(before) >= 3 and noise_scale(np.log(before)) <= MOTIONLESS and _untrained_until(run, climb) and \
        end <= (1 - MIN_DROP) * reference_level(run, loss)


def _settled(norms: pd.Series) -> bool:
    """Did the norm stop growing: over the second half of the run it less than doubled (``SETTLED``: the
    median of that half's last quarter over its first quarter's; four records at least)? Gradients that
    explode keep growing -- a loss scale doubling every few steps multiplies the norm at every doubling."""
    later = norms.iloc[len(norms) // 2:]
    if len(later) < 4:
        return False
    quarter = len(later) // 4
    return float(later.iloc[-quarter:].median()) / float(later.iloc[:quarter].median()) < SETTLED


def _sharpening(run, climb: int) -> bool:
    """Is the training loss a likelihood that went below zero -- a density's negative log-likelihood, as no
    loss bounded by 0 does -- and still falling from where the norm's climb began: a downward Mann-Kendall
    trend over the records from ``climb`` on (z at most -``TREND_Z``, eight records at least) and its last
    fifth (median) below its median over the three records up to ``climb``?

    Why: the gradient of a density's log-likelihood grows as the density sharpens -- a Gaussian's with
    respect to its mean is the residual over the variance -- so a mixture density network learning its
    branches has its norm grow 60-200x while its NLL falls from 0.9 to -0.8 (three healthy outside runs,
    ``grad_explosion`` until 2026-12-06). The other rules here read the loss as a distance from a minimum
    of 0 (:func:`_outgrew_the_loss`, :func:`_woke_up`), which a likelihood below zero is not. Only for a
    norm that settled (the caller asks, :func:`_settled`): a loss scale doubling behind an optimizer that
    hides it (Adam) leaves the NLL falling too, and multiplies the norm at every doubling."""
    loss = run.curve("train_loss")
    loss = loss[np.isfinite(loss)]
    after, before = loss[loss.index >= climb], loss[loss.index <= climb].iloc[-3:]
    if len(loss) < 8 or log_density.shift_of(run) == 0 or len(after) < 8 or before.empty:
        return False  # (the rules read such a loss moved above zero: log_density)
    return trend_z(after) <= -TREND_Z and float(tail(loss, 0.2).median()) < float(before.median())


def _leapt(smoothed: pd.Series, explode: float) -> bool:
    """Did the norm (``smoothed``, its rolling median of 3) rise ``explode`` x from one record to the next?

    Why :func:`_sharpening` asks: a density sharpens gradually, and its gradients grow with it, record by
    record (the mixture density networks it excuses: 60-200 x over hundreds of steps). A norm that leaps
    tenfold at one record and climbs on from there was multiplied by something -- an audio denoiser whose
    SI-SNR loss (negative, like a log density) was multiplied by a gradient-accumulation counter never reset:
    11 -> 337 in one record, then 6,000, while Adam kept the loss falling (an outside set, healthy until
    2026-12-07)."""
    values = smoothed.to_numpy(dtype=float)
    return len(values) > 1 and bool((values[1:] >= explode * values[:-1]).any())


def _fell_while_growing(loss: pd.Series, norms: pd.Series, base: float, end: float) -> bool:
    """Is the loss's ``end`` level ``MIN_DROP`` below its median over the three records up to the first one
    where the rolling median of 3 of ``norms`` passed sqrt(``EXPLODE``) x ``base`` -- halfway to tenfold on
    a log scale?

    Why: a network's gradients grow with its weights as it learns, and over a long run the norm can creep
    tenfold with the loss falling all the way (an outside WaveNet at Adam 2e-3: its head's norm 0.12 -> 1.7
    over 500 steps, the loss 4.15 -> 2.77; it passed tenfold at step 470 of 500, and with no records left
    after that to show the loss still falling it was ``grad_explosion`` until 2026-12-05). A norm that
    explodes comes with a loss that stalls or climbs, not with one a tenth lower than where the growth
    began and never ``MIN_DROP`` above its lowest on the way there (smoothed: the ``zero_grad()`` pile-up
    above ended a tenth below where its norm passed threefold, but climbed 70 % on the way)."""
    halfway = first_sustained(smooth(norms, 3) >= math.sqrt(EXPLODE) * base, 1)
    at_halfway = loss[loss.index <= halfway].iloc[-3:] if halfway is not None else loss.iloc[:0]
    if len(at_halfway) == 0 or end >= (1 - MIN_DROP) * float(at_halfway.median()):
        return False
    since = smooth(loss, window_for(len(loss))).loc[halfway:]
    return float((since / since.cummin()).max()) < 1 + MIN_DROP  # and never climbed on the way down


def _untrained_until(run, climb: int) -> bool:
    """Had the training loss learned nothing by ``climb`` (where the norm's climb began): its rolling median
    of 3, up to and at that step, never ``MIN_DROP`` below the untrained reference
    (:func:`signals.reference_level`: ln K when declared, else the first record)?

    Why: a hundredfold climb is a spike only from a *working* level. A network initialised at a saddle --
    a pointer network scoring exactly ln 5 for its first 30 steps under warmup, its norm 0.001 -- has no
    working level yet: its gradient grows as it finds the way down, 0.001 -> 0.7 (x700) while the loss
    fell from 1.61 to 0.48 and the norm then held (an outside set, 2026-12-06: ``grad_explosion`` until
    then). :func:`_woke_up` still asks the norm to settle and the loss to end below where the climb began."""
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    before = smooth(loss, 3)[loss.index <= climb]
    return len(before) >= 1 and float(before.min()) > (1 - MIN_DROP) * reference_level(run, loss)


def _awake_before(norms: pd.Series, climb: int) -> bool:
    """Had the norm settled at a working level before its climb began (the step ``climb``,
    :func:`schedule.climb_start`): over at least ``AWAKE_RECORDS`` records before it, the median of their second half
    less than ``SETTLED`` x that of their first?

    Why: a norm that wakes up grows from its first records -- the weights it is made of grow from near
    zero, and so does it (the healthy runs :func:`_woke_up` excuses: 3.6-18 x between the halves of the
    records before their climb). One that sat at one level for a while and then climbed a hundredfold in a
    few records was already awake; something multiplied it (``optimizer.zero_grad()`` dropped mid-run: the
    gradients pile up, 0.25 -> 25 in four records, after fifteen records within 3 % of 0.25 -- an outside
    ordinal-regression MLP under Adam, whose loss, the steps normalised, kept falling: healthy until
    2026-12-05, the climb read as a wake-up)."""
    before = norms[norms.index < climb]
    half = len(before) // 2
    return len(before) >= AWAKE_RECORDS and \
        float(before.iloc[half:].median()) < SETTLED * float(before.iloc[:half].median())


def _within_its_working_level(norms: pd.Series, climb: int, explode: float, spike_at: float) -> bool:
    """Was the norm awake before its ``climb`` began (:func:`_awake_before`), and from that working level
    -- the median of the second half of the records before ``climb`` -- does it never rise ``explode`` x
    (rolling median of 3, two records running) nor ``spike_at`` x at one record?

    Why: the baseline is the norm's first records, and a norm that wakes up in its first tenth of the run --
    a warmup that lifts the learning rate, a head whose weights grow from zero, a likelihood loss whose
    gradients grow as the predicted spread shrinks -- then works at a level 5-10 x that baseline, and its
    ordinary swings cross 10 x it now and then (an outside mixture density network under warmup and linear
    decay: baseline 0.55, working at 2-7 from its fourth record, its last fifth at 5.5 -- ``grad_explosion``
    until 2026-12-06). Such a norm was awake, so it did not wake up (:func:`_woke_up` rightly declines), and
    measured from where it worked it did not explode either.
    Gradients that explode leave their working level by the same factors as from a first record: a
    ``zero_grad()`` dropped mid-run took a norm from 0.25, where it had sat for fifteen records, to 25."""
    before = norms[norms.index < climb]
    if not _awake_before(norms, climb):
        return False
    level = float(before.iloc[len(before) // 2:].median())
    after = norms[norms.index >= climb]
    sustained = first_sustained(smooth(after, 3) >= explode * level, 2)
    return sustained is None and not bool((after >= spike_at * level).any())


def _escaping_a_plateau(run, step: int) -> bool:
    """Did the training loss -- or the validation loss -- flat or falling before ``step`` (where the norm's
    climb began), fall at least ``ESCAPE`` (2) x faster per step from there to the end, and by ``MIN_FALL``
    (10 %) or more? Rates in log loss per step; the train loss over a rolling median of 3, the val loss from
    the last evaluation at or before ``step``.

    Why: a network can sit on a plateau -- a saddle, or a VAE whose decoder ignores its latent code -- where
    the loss surface is nearly flat and so is the gradient; leaving it, the gradient grows *because* the
    slope downhill does, and the loss drops faster than it ever did (an outside VAE: flat at 3.2 for 170
    steps, then 3.0 -> 2.2 in 30 while its norm rose 0.4 -> 17; the run ended there, before the norm could
    settle as :func:`_woke_up` asks: ``grad_explosion`` until 2026-12-04). Gradients that explode on their
    own do not speed the descent up: a loss scale never undone leaves the loss falling at its usual,
    slowing pace, and a learning rate too high throws the loss *up* before the norm takes off. Why the
    validation loss too: an LSTM autoencoder left its plateau (predicting zeros, 0.30) in a few noisy
    records that the train loss, batch by batch, half gave back -- while its fixed validation set went
    0.302, 0.302, then 0.261, 0.238 as the norm rose 34-fold. Under ``SPIKE`` only: a norm a hundredfold up
    is not a slope. Two records before the climb are enough to say the loss was flat there, the train loss's
    as the val loss's (three until 2026-12-07): a network that starts at a saddle starts to leave it at once,
    and its climb begins at its second record -- an outside spatial-transformer classifier at ln 10 for its
    first two records, then 2.30 -> 1.66 while its head's norm grew 0.21 -> 3.1, cut at 150 steps before
    the norm could settle, was ``grad_explosion``. A loss rising between those two records is no plateau,
    and the fall after must still be twice as fast and a tenth deep."""
    loss = run.curve("train_loss")
    return _fell_faster_from(np.log(smooth(loss[loss > 0], 3)), step, least=2) or \
        _fell_faster_from(np.log(val_losses(run)), step, least=2)


def _fell_faster_from(log_loss: pd.Series, step: int, least: int = 3) -> bool:
    """Did ``log_loss``, not rising up to ``step``, fall ``ESCAPE`` x faster per step from its last value at
    or before ``step`` to its end, and by ``MIN_FALL`` or more (:func:`_escaping_a_plateau`)? ``least``
    values on each side."""
    before, after = log_loss[log_loss.index <= step], log_loss[log_loss.index >= step]
    if len(before) < least or len(after) < least - 1:
        return False
    after = pd.concat([before.iloc[-1:], after[after.index > before.index[-1]]])
    fell_before = (before.iloc[0] - before.iloc[-1]) / (before.index[-1] - before.index[0])
    fell_after = (after.iloc[0] - after.iloc[-1]) / max(after.index[-1] - after.index[0], 1)
    return fell_before >= 0 and fell_after >= ESCAPE * fell_before and \
        after.iloc[0] - after.iloc[-1] >= -math.log1p(-MIN_FALL)


def _burst_carried_by_the_loss(run, norms: pd.Series, base: float) -> bool:
    """Was a hundredfold burst the loss's doing: the norm back under ``SPIKE`` x ``base`` over the last fifth
    of the run, and at its peak no faster than the loss (:func:`_peak_outgrew_the_loss`)? Why both: a loss
    scale never unscaled (x4 every 150 steps) lifts norm and loss together at each step up too -- but its
    norm stays 700x up: exploding."""
    return float(tail(norms, 0.2).median()) < SPIKE * base and not _peak_outgrew_the_loss(run, norms)


def _peak_outgrew_the_loss(run, norms: pd.Series) -> bool:
    """At the norm's peak (rolling median of 3), had the norm per unit of training loss risen ``EXPLODE`` x
    above its median over the tenth of the records before the peak (at least 5)? True when fewer than five
    records hold both there.

    Why, after a wake-up: :func:`_outgrew_the_loss` measures the norm per unit of loss against the first
    records, and a norm that woke up from near zero while the loss fell has outgrown *those* a
    hundredfold before anything went wrong. Against the working level just before the peak, a burst that a
    hard stretch of data carried -- the loss jumping with it, as a batch the confident model gets badly
    wrong does -- keeps pace with the loss (an Inception-style CNN at 0.1, one bump to 1.6 with its norm
    7 -> 52: x0.9 per unit of loss), while gradients that blow up on their own leave the loss behind (three
    records at 60 beside a loss that stayed at 0.01: x15)."""
    loss = run.curve("train_loss")
    both = pd.concat([smooth(norms, 3), loss], axis=1, join="inner").dropna()
    both = both[(both.iloc[:, 0] > 0) & (both.iloc[:, 1] > 0)]
    peak = int(np.argmax(both.iloc[:, 0].to_numpy())) if len(both) else 0
    start = max(0, peak - max(5, len(both) // 10))
    if peak - start < 5:
        return True
    per_unit = both.iloc[:, 0] / smooth(both.iloc[:, 1], 3)  # both smoothed alike: one hard batch is no peak
    return float(per_unit.iloc[peak]) >= EXPLODE * float(per_unit.iloc[start:peak].median())


def _died(run) -> bool:
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    return len(loss) >= 2 and dead_network(run, loss, reference_level(run, loss)) is not None


def _blew_up_by(run, row) -> bool:
    """Did the loss blow up (:func:`reference.blown_up_at`) at or before the training row ``row``?"""
    step = blown_up_at(run)
    return step is not None and step <= run.train.loc[row, "step"]


def _vanish_finding(step, score, evidence) -> Finding:
    return Finding("vanishing_gradients", score, step, evidence,
                   fix="ReLU/GELU instead of sigmoid/tanh in deep stacks, residual connections, normalisation "
                       "layers, a fan-in-scaled initialisation (He/Xavier)",
                   experiment="print grad_norm per layer for one batch: it should not shrink by orders of "
                              "magnitude from the last layer to the first",
                   lesson="docs/doctor.md#vanishing_gradients")
