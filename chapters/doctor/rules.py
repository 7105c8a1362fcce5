"""The doctor's rule book: every rule, and how their findings are ranked.

A rule is a module with ``check(run) -> list[Finding]``. Adding one is one module and one line in
``RULES``. Findings are ranked most likely first by confidence; ties go to the earlier step, because the
first thing that went wrong usually caused the rest (an exploding gradient comes before the NaN).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from chapters.doctor import (divergence, frozen, gpu_utilisation, gradients, leakage, log_density, memory, nan,
                             no_shuffle, oom, oscillation, overfitting, plateau, throughput)
from chapters.doctor.findings import Diagnosis, Finding
from chapters.records.runlog import RunLog

RULES = [nan, oom, leakage, frozen, no_shuffle, gradients, divergence, overfitting, memory, throughput,
         oscillation, plateau, gpu_utilisation]


# cause -> symptoms it produces. When both are found and the cause starts no later than the symptom, the
# cause is listed first whatever the scores say: the fix is for the cause -- unless the symptom's own rule
# saw a more direct cause in the log (``Finding.caused_by``: the learning rate rose at the very records the
# loss left, which no shuffling or gradient pattern explains).
CONSEQUENCES = {
    # ... and a plateau: inputs suddenly a thousand times larger (a data source in millimetres) give one
    # huge update that switches every unit off, and the net sits at ln K while its norm stays up (an outside
    # PointNet: the plateau at 0.8 beside the explosion until 2026-12-06, a confident finding that was wrong)
    "grad_explosion": {"divergence", "oscillation", "loss_plateau"},
    # one huge update switches every ReLU off, so no gradient reaches the layers below: zero gradients that
    # look like a freeze; and a loss thrown far out gives some groups gradients orders of magnitude above the
    # rest, so the others' *share* looks vanishing (an Elman RNN at 300x its LR: its head at 5e-5 of the
    # recurrent weights' norm of 1e5-1e7, 2026-12-03). Not nan_loss: a loss that climbed and then overflowed
    # went non-finite, and the vocabulary's divergence is a climb *without* going non-finite -- the NaN
    # leads, the climb is listed after it (every outside author labelled such runs nan_loss: 3-19 records of
    # climbing to 1e27-1e34 before the NaN; called divergence until 2026-12-03)
    "divergence": {"frozen_parameters", "vanishing_gradients"},
    "vanishing_gradients": {"loss_plateau"},
    "frozen_parameters": {"loss_plateau"},
    "no_shuffle": {"oscillation", "divergence", "overfitting", "grad_explosion", "loss_plateau"},
    "memory_growth": {"throughput_drop"},
}


# Causes whose consequence can also come first: an LR too high from the start throws the loss up, and the
# gradients grow with it (real SGD runs at 10x their learning rate, batch 2-4: the loss began to climb 5-17
# records before the norm passed 10x). When the consequence started strictly earlier, the order is reversed.
# Onsets are only the fallback: when the gradients rule could tell which of the norm and the loss grew by
# more orders of magnitude (``Finding.led_by``, gradients._led_by), that one goes first.
GROW_WITH_THE_LOSS = {"grad_explosion"}


# Findings about the machine rather than the training: speed falls with a busy neighbour as well as with a
# stalling loader, so a finding about the loss or the gradients -- which explains the run -- comes first.
MACHINE = {"throughput_drop", "gpu_underutilised"}


# A symptom listed after its cause is true, but it is not the diagnosis: its confidence is capped here, so
# that a confidence of 0.8 or more keeps meaning "this is probably what went wrong".
SYMPTOM = 0.7
# A run that broke -- the allocator failed, the loss went non-finite -- is diagnosed by that event; what the
# log shows on the road to it is its story, capped like a symptom wherever it is listed: memory that grew until
# the allocator failed (on the outside sets, every `memory_growth` finding at 0.8 or more beside an `oom` was on
# a run its author labelled `oom`: 89 of them), a loss or gradient norm that climbed until it overflowed (43 of
# 44 such climbs beside a `nan_loss` were on runs labelled `nan_loss`).
ROAD_TO = {"oom": {"memory_growth"}, "nan_loss": {"divergence", "grad_explosion"}}


def rank(findings: list[Finding]) -> list[Finding]:
    def start(finding):
        return finding.step if finding.step is not None else -1

    def causes(finding):
        if finding.caused_by:
            return []  # its rule saw its cause in the log (the LR rose at its onset): nobody's symptom
        return [c.confidence for c in findings
                if finding.anomaly in CONSEQUENCES.get(c.anomaly, ()) and start(c) <= start(finding)
                and c.led_by != "loss"]  # gradients the loss carried up caused nothing

    def came_after(finding):
        # Gradients that exploded *after* the loss began to climb or swing grew with it -- a loss far from
        # its minimum has large gradients -- so they are that finding's symptom, not its cause.
        if finding.anomaly not in GROW_WITH_THE_LOSS or finding.led_by == "gradient":
            return []  # a norm that outgrew the loss is no symptom of it, whichever moved first
        return [s.confidence for s in findings if s.anomaly in CONSEQUENCES[finding.anomaly] and
                (start(s) < start(finding) or finding.led_by == "loss")]

    def on_the_road(finding):
        return any(finding.anomaly in ROAD_TO.get(event.anomaly, ()) for event in findings)

    def score(finding):
        road = [SYMPTOM] if on_the_road(finding) else []
        return min([finding.confidence] + road + [c - 1e-3 for c in causes(finding) + came_after(finding)])

    ranked = sorted(findings, key=lambda f: (f.anomaly in MACHINE, -score(f), start(f)))
    return [replace(f, confidence=min(f.confidence, SYMPTOM)) if causes(f) or came_after(f) or on_the_road(f) else f
            for f in ranked]


def diagnose_run(run: RunLog) -> Diagnosis:
    # The rules divide and exponentiate logged values, which the contract lets be 0, 1e-300 or 1e300 (a
    # loss that blew up); the result is then inf or 0 and every comparison with it is the right one, so
    # numpy's overflow warnings would only print noise beside the report.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        run = log_density.moved(run)  # a loss below zero is read from a baseline (factors need a zero)
        findings = [finding for rule in RULES for finding in rule.check(run)]
    return Diagnosis(rank(_one_per_label(findings)), list(run.notes) + frozen.counted_fixed(run, findings))


def _one_per_label(findings: list[Finding]) -> list[Finding]:
    """The most confident finding of each label. Why: two rules can reach one label by different evidence
    (a network dead below its head, seen by the frozen rule, is a ``loss_plateau``; a swing on a clock of its
    own, seen by the periodicity test, is an ``oscillation``), and the report names each diagnosis once."""
    best: dict[str, Finding] = {}
    for finding in findings:
        if finding.anomaly not in best or finding.confidence > best[finding.anomaly].confidence:
            best[finding.anomaly] = finding
    return list(best.values())
