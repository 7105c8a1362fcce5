"""Did a run's log show what its recipe injected? (``bench/doctor_families.py --audit``)

A case's label names its *recipe*: what the generator did, not what the run then did. Most of the time the
two agree; sometimes a fault does not take (a leak too weak for the model to use), a healthy recipe does
not learn within its budget (the loss never leaves ln K), or a divergence goes straight to NaN, which the
label vocabulary calls ``nan_loss``. Scored as if they agreed, such runs count the doctor wrong for
reading the log right. This module says, from the log's own numbers, when the log does not show its
label -- by plain criteria that share no statistic with the doctor's rules (no noise scales, no trend
tests), so the audit cannot be tuned by tuning the rules. The benchmark prints its figures both ways.
"""

from __future__ import annotations

from chapters.records.runlog import RunLog, curve

LEARNED = 0.97  # a healthy run's best evaluation, or its train loss at the end, is 3 % below where it began
OVERFIT = 1.1  # ... and its last evaluation not 10 % above its best (Prechelt's GL at 10 %, read plainly)


def not_shown(label: str | None, log_dir) -> str | None:
    """Why the log in ``log_dir`` does not show ``label`` (None: healthy), or None when it does or when
    these criteria cannot tell (no evaluations, no declared floor)."""
    run = RunLog.load(log_dir)
    val = curve(run.evals, "val_loss", bins=False)  # finite values only
    if label is None and len(val) >= 2:
        first, last, best = float(val.iloc[0]), float(val.iloc[-1]), float(val.min())
        if last > OVERFIT * best:
            return f"overfitted: last val loss {last:.4g} is {last / best - 1:.0%} above its best {best:.4g}"
        loss = run.curve("train_loss")
        tenth = max(1, len(loss) // 10)
        start, end = float(loss.iloc[:tenth].median()), float(loss.iloc[-tenth:].median())
        if best > LEARNED * first and end > LEARNED * start:
            return f"did not learn: val loss {first:.4g} -> {last:.4g}, train loss {start:.4g} -> {end:.4g}"
    if label == "leakage" and run.loss_floor and len(val):
        if float(val.min()) >= run.loss_floor:
            return f"leak did not show: val loss never below the declared floor {run.loss_floor:.4g}"
    if label == "divergence" and run.nonfinite_steps(("train_loss",)):
        finite = run.curve("train_loss")
        if len(finite) and float(finite.max()) <= float(finite.iloc[0]):
            return "the loss went non-finite without rising above its first record: nan_loss, by the vocabulary"
    return None
