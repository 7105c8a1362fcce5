"""``bench/doctor_outside.py``, the scorer of labelled outside sets, reads a set as a folder or as the ``.tar.xz``
archive ``bench/outside/`` keeps, and counts a blank ``visible`` as shown (and a healthy run as shown, whatever
its author wrote: it has no fault to hide); and the kept outside logs that a rule change fixed stay fixed."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SCORER = Path(__file__).resolve().parents[1] / "bench" / "doctor_outside.py"


def write_set(root: Path, healthy_visible: str = "") -> Path:
    """A set of two logs: a healthy run (its ``visible`` left blank, as one outside author did, unless
    ``healthy_visible`` says otherwise) and a run whose loss went NaN."""
    folder = root / "ZZ"
    losses = {"calm": [2.3 * math.exp(-i / 40) + 0.5 for i in range(120)],
              "blown": [2.3 - 0.01 * i for i in range(60)] + [math.nan] * 5}
    for name, values in losses.items():
        log = folder / "logs" / name / "metrics.jsonl"
        log.parent.mkdir(parents=True)
        log.write_text("".join(json.dumps({"step": 10 * (i + 1), "train_loss": v}) + "\n"
                               for i, v in enumerate(values)))
    (folder / "labels.csv").write_text(f"name,label,visible,note\ncalm,healthy,{healthy_visible},\n"
                                       "blown,nan_loss,yes,lr x300\n")
    return folder


def score(*paths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCORER), *map(str, paths), "--visible", "yes"],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("packed", [False, True])
def test_a_set_scores_the_same_from_its_folder_and_from_its_archive(tmp_path, packed):
    folder = write_set(tmp_path)
    target = folder
    if packed:
        target = tmp_path / "ZZ.tar.xz"
        with tarfile.open(target, "w:xz") as archive:
            archive.add(folder, arcname="ZZ")
    result = score(target)
    assert result.returncode == 0, result.stderr
    assert "top-1 1/1 = 1.00; false alarms 0/1" in result.stdout  # the blank-visible healthy run is counted


def test_a_healthy_run_marked_not_visible_is_still_counted(tmp_path):
    result = score(write_set(tmp_path, healthy_visible="no"))  # another author wrote "no" on every healthy run
    assert result.returncode == 0, result.stderr
    assert "top-1 1/1 = 1.00; false alarms 0/1" in result.stdout


def test_a_miss_is_named_by_its_set_and_run(tmp_path):
    folder = write_set(tmp_path)
    (folder / "labels.csv").write_text("name,label,visible,note\ncalm,overfitting,yes,\nblown,nan_loss,yes,\n")
    result = subprocess.run([sys.executable, str(SCORER), str(folder), "--misses"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    missed = [line.split() for line in result.stdout.splitlines() if "want" in line]
    assert [line[:2] for line in missed] == [["ZZ", "calm"]]  # two sets may both hold a run called calm


def test_a_label_without_a_log_is_named_and_not_scored(tmp_path):
    folder = write_set(tmp_path)
    with open(folder / "labels.csv", "a") as labels:
        labels.write("unfinished,healthy,yes,deleted by its author\n")
    result = score(folder)
    assert result.returncode == 0, result.stderr
    assert "ZZ/unfinished has a label but no log" in result.stderr
    assert "false alarms 0/1" in result.stdout  # counted, it would have been a second healthy run


def test_a_note_broken_by_a_stray_carriage_return_is_named_and_not_scored(tmp_path):
    folder = write_set(tmp_path)
    # An author appended to a note after a Windows line end: csv reads the rest as a row of its own.
    (folder / "labels.csv").write_bytes(b"name,label,visible,note\r\ncalm,healthy,yes,adam\r (added later)\r\n"
                                        b"blown,nan_loss,yes,lr x300\r\n")
    result = score(folder)
    assert result.returncode == 0, result.stderr
    assert "' (added later)' has no label" in result.stderr
    assert "top-1 1/1 = 1.00; false alarms 0/1" in result.stdout


def test_a_missing_archive_is_one_line_and_exit_2(tmp_path):
    result = score(tmp_path / "nowhere.tar.xz")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


OUTSIDE = SCORER.parent / "outside"


@pytest.mark.parametrize("kept, log, want", [
    ("GL", "ns2", "no_shuffle"),  # identity-sorted data, four records an epoch under noisy batches
    ("GL", "dv3", "divergence"),  # a validation loss jumping along a climb
    ("GN", "nozero_2", "loss_plateau"),  # zero_grad dropped: the norm a running sum, the loss stuck
    ("GR", "f_pla_3", "loss_plateau"),  # an optimizer built over a stale copy of the model
    ("GO", "f_van1", "vanishing_gradients"),  # first blocks starved during training
    ("GB", "f_van_b", "vanishing_gradients"),  # an embedding pushed through tanh(1500 u) mid-run
    ("GT", "h13_inverse_adam_const", "healthy"),  # a mixture density network sharpening
    ("GV", "h04", "loss_plateau"),  # a click-through model stuck at its base rate
    ("GV", "f_pl3", "loss_plateau"),  # ... and one evaluated four times
    ("GZ", "o01", "overfitting"),  # 64 examples fitted under half the noise floor, val flat far above it
    ("GU", "f_overfit_small", "overfitting"),  # ... a date translator on a handful of pairs
    ("GZ", "h04", "healthy"),  # an EMA codebook counted as not trainable: fixed by design, a note
    ("HA", "healthy_01", "healthy"),  # ... and a BYOL momentum target encoder
    ("HC", "h01", "healthy"),  # a Cox loss scoring the short last batch of every epoch lower: reshuffled
    ("GZ", "x02", "loss_plateau"),  # a VQ-VAE's units killed by one update, its encoder's gradient gone after
    ("HB", "d1", "divergence"),  # an SGD rate ramped x1.03 per step: the loss climbs back as the rate keeps rising
    ("HB", "v1", "vanishing_gradients"),  # an embedding at 6e-6 of the head, its groups logged by name
    ("HI", "h02", "healthy"),  # an ArcFace loss still falling at ln K
    ("HJ", "healthy_00", "healthy"),  # a DQN's TD loss creeping up with its target network's values
    ("HM", "h01", "healthy"),  # a detector's focal + L1 loss that fell 60 % to about ln 4
    ("HO", "pose_f04", "loss_plateau"),  # a heatmap MSE stuck at 14 x its floor of 0.0009
    ("HU", "hu_h09", "healthy"),  # a pointer network's norm flat at a saddle, then waking up a thousandfold
    ("HW", "hw_f09", "grad_explosion"),  # an SI-SNR loss times an accumulation counter: a leap, no sharpening
    ("HX", "h07_long", "healthy"),  # logged from step 50: the first record already past the steepest descent
    ("HX", "f_osc2", "loss_plateau"),  # 27,600 at the first record, then ln 2 to the fourth decimal, no ln K
    ("IA", "run_overfitting_0", "overfitting"),  # a val rise small only beside a first record of 1,260
    ("GC", "f_lk2", "leakage"),  # one last evaluation at a quarter of the floor, the train loss under it too
    ("JU", "h10", "healthy"),  # a flow near its floor in bits per dimension, half its gap closed from step 10
    ("JU", "h04", "healthy"),  # ... its coupling layers' gradient share small below a zero-initialised output
    ("JX", "h14", "healthy"),  # ln 10 for two records, then the loss falling as the head's norm grew 15-fold
    ("KE", "v1", "vanishing_gradients"),  # a KAN's lower layers at a gradient of exactly 0 once it had learned
    ("KH", "c01", "loss_plateau"),  # thrown as high as 1e17, then ln 4 to the fourth decimal: dead, not swinging
    ("KS", "d01", "divergence"),  # Adam with maximize=True: 51 -> 190, too noisy a climb for the rise limit
    ("KT", "h15", "healthy"),  # three evaluations 0.26 -> 0.133 -> 0.120 at 11 x a floor out of reach: no ball
    ("HU", "hu_f_div3", "divergence"),  # SGD's rate x100 and left there: 0.5 -> ln 8, constant -- the rate threw it
    ("LI", "div1", "divergence"),  # ... Adam's x300 under clipping: thrown to 29,000, then ln 32 to the third decimal
    ("LL", "l3", "leakage"),  # fifteen training records, the last evaluation at 0.38 x the floor, train under it
    ("LB", "van4", "vanishing_gradients"),  # no gradient anywhere, the input layer 18x below the hidden stack
    ("LF", "div_c", "divergence"),  # thrown from 1.0 to 17, settled at 2.9 of ln 26's 3.26: gave it back
    ("LH", "f_plat_adam_1e-6", "loss_plateau"),  # logged from step 50 and never moving: 0.6933 -> 0.6910
])
def test_kept_outside_logs_keep_the_diagnosis_their_authors_gave(tmp_path, kept, log, want):
    # Logs from code this project did not write, each read wrongly until the pass that fixed it (2026-12-06/07):
    # a regression guard on the real thing, beside the constructed curves of test_doctor_rules.py.
    from chapters.doctor import diagnose
    with tarfile.open(OUTSIDE / f"{kept}.tar.xz") as archive:
        member = archive.getmember(f"{kept}/logs/{log}/metrics.jsonl")
        (tmp_path / "metrics.jsonl").write_bytes(archive.extractfile(member).read())
    found = diagnose(tmp_path).findings
    assert (found[0].anomaly if found else "healthy") == want
