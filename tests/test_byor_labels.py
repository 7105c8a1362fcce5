"""The same faulty run, written by TensorBoard, the HF Trainer's state and Lightning's CSVLogger, gets the
doctor's label it gets from our JSONL.

The runs come from the doctor's labelled benchmark (seeded, a second or so each: an MLP trained with one
fault injected the way it happens in real code); each is then rewritten through each tool's real writer
with that tool's key names (``tests/byor_writers.py``). A format whose library is not installed is skipped.
"""

from __future__ import annotations

import pytest

from chapters.labelled_runs import Case, generate
from chapters.doctor.rules import MACHINE, diagnose_run
from chapters.records.formats.detect import load
from tests.byor_writers import WRITERS, available

FAULTS = ["nan_loss", "divergence", "loss_plateau", "overfitting", "healthy"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("byor-labels")
    return {fault: generate(Case("mlp", fault, seed=0), root / fault) for fault in FAULTS}


def top_label(path, format="auto"):
    """The doctor's top finding about the training. Findings about the machine (``MACHINE``: throughput) are
    left out: these runs' clock readings depend on how busy the machine was while the test ran."""
    run_log, source = load(path, format)
    labels = [finding.anomaly for finding in diagnose_run(run_log).findings if finding.anomaly not in MACHINE]
    return (labels[0] if labels else None), source.format


@pytest.mark.parametrize("format", list(WRITERS))
@pytest.mark.parametrize("fault", FAULTS)
def test_label_through_each_format_equals_the_jsonl_twin(runs, tmp_path, fault, format):
    if not available(format):
        pytest.skip(f"the {format} writer's library is not installed")
    jsonl_label, _ = top_label(runs[fault])
    assert jsonl_label == (None if fault == "healthy" else fault), "the benchmark run itself must show its fault"
    folder = WRITERS[format](runs[fault], tmp_path / format)
    label, detected = top_label(folder)
    assert detected == format
    assert label == jsonl_label
