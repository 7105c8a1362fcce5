"""Nothing lost, nothing overwritten, one line: data-loss paths and faults, through ``python -m chapters.cli``.

Every case that points ``clinic`` at existing files checks that they are byte-identical afterwards. Faults
are real: SIGTERM / SIGINT / SIGKILL to a training process, a second process on the same folder, a full
disk (a 2 MB tmpfs when this machine lets us mount one; a file-size limit otherwise), SIGTERM to torchrun.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from chapters.records.jsonl import read_metrics_log
from tests.conftest import REPO, clinic

QUICK = ["--quiet", "--batch-size", "8", "--log-every", "2", "--eval-every", "2"]
CHILD_ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(Path(directory).rglob("*"))
            if p.is_file() and p.name != ".clinic-train.lock"}


def one_line(result, code: int, *fragments: str) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert all(fragment in lines[0] for fragment in fragments), lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 4-step run (run/) with its checkpoints (ck/): copied by the tests that damage things."""
    root = tmp_path_factory.mktemp("finished")
    result = clinic("train", "--steps", "4", *QUICK, "--out", str(root / "run"), "--ckpt-dir", str(root / "ck"))
    assert result.returncode == 0, result.stderr
    return root


# ------------------------------------------------------------------- 1. fresh run into a checkpoint folder
@pytest.mark.parametrize("index", [None, "[]"], ids=["no index", "empty index"])
def test_fresh_run_refuses_checkpoints_the_index_does_not_name(finished, tmp_path, index):
    ck = tmp_path / "ck"
    shutil.copytree(finished / "ck", ck)
    if index is None:
        (ck / "index.json").unlink()
    else:
        stored = json.loads((ck / "index.json").read_text())
        (ck / "index.json").write_text(json.dumps({**stored, "checkpoints": [], "latest": None}))
    (ck / "model.pt").write_bytes(b"someone else's weights")  # any *.pt counts, not only step-*.pt
    before = snapshot(ck)
    result = clinic("train", "--steps", "2", *QUICK, "--out", str(tmp_path / "run"), "--ckpt-dir", str(ck))
    one_line(result, 2, "already holds checkpoints", "step-00000004.pt", "--resume")
    assert snapshot(ck) == before


def test_resume_without_an_index_keeps_every_checkpoint(finished, tmp_path):
    """Without an index no file is an orphan: resuming must not delete the checkpoint it resumed from."""
    ck = tmp_path / "ck"
    shutil.copytree(finished / "ck", ck)
    (ck / "index.json").unlink()
    before = snapshot(ck)
    result = clinic("train", "--steps", "6", *QUICK, "--out", str(tmp_path / "run"), "--ckpt-dir", str(ck),
                    "--resume")
    assert result.returncode == 0, result.stderr
    assert all((ck / name).read_bytes() == data for name, data in before.items())


# ------------------------------------------------------------------------- 2. index entries outside D
@pytest.mark.parametrize("name", ["../victim.txt", "/ABSOLUTE/victim.txt", "index.json", "sub/../step-00000002.pt",
                                  "./step-00000002.pt", "metrics.jsonl"])
def test_index_file_entries_must_be_plain_checkpoint_names(finished, tmp_path, name):
    ck = tmp_path / "ck"
    shutil.copytree(finished / "ck", ck)
    victim = tmp_path / "victim.txt"
    victim.write_text("not a checkpoint\n")
    (ck / "metrics.jsonl").write_text("{}\n")  # a --ckpt-dir that is also the --out
    name = name.replace("/ABSOLUTE", str(tmp_path))
    stored = json.loads((ck / "index.json").read_text())
    bad = {**stored["checkpoints"][0], "step": 1, "file": name}
    (ck / "index.json").write_text(json.dumps({**stored, "checkpoints": [bad, *stored["checkpoints"]]}))
    outside, inside = snapshot(tmp_path / "ck"), {"victim.txt": victim.read_bytes()}

    listed = clinic("ckpt", "verify", str(ck))
    assert listed.returncode == 0 and listed.stderr.count("ignoring the entry for step 1") == 1
    result = clinic("train", "--steps", "8", *QUICK, "--top-k", "0", "--keep-last", "1", "--out",
                    str(tmp_path / "run"), "--ckpt-dir", str(ck), "--resume")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("ignoring the entry for step 1") == 1 and str(ck) in result.stderr
    assert victim.read_bytes() == inside["victim.txt"]
    assert (ck / "metrics.jsonl").read_text() == "{}\n"
    assert all((ck / n).exists() for n in outside if not n.startswith("step-"))  # index.json still there


# --------------------------------------------------------------------------------- 3. course release
def test_release_of_a_broken_notebook_keeps_the_old_release(tmp_path):
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    (course / "exercises").mkdir()
    shutil.copy(REPO / "nbgrader_config.py", course)
    shutil.copytree(REPO / "solutions" / "03_nan", course / "solutions" / "03_nan")
    shutil.copytree(REPO / "exercises" / "03_nan", course / "exercises" / "03_nan")
    (course / "solutions" / "03_nan" / "03_nan.ipynb").write_text('{"cells": [')
    before = snapshot(course / "exercises")
    result = clinic("course", "release", "03_nan", "--course", str(course))
    one_line(result, 2, "solutions/03_nan/03_nan.ipynb", "not a readable notebook")
    assert snapshot(course / "exercises") == before
    assert sorted(p.name for p in (course / "exercises").iterdir()) == ["03_nan"]  # no temporary folder left


# ------------------------------------------------------------------------------- 4. --out and earlier runs
def test_empty_out_is_refused_and_the_current_directory_untouched(tmp_path):
    (tmp_path / "config.json").write_text('{"mine": true}\n')
    before = snapshot(tmp_path)
    one_line(clinic("train", "--steps", "2", *QUICK, "--out", "", cwd=tmp_path), 2, "--out", "empty")
    assert snapshot(tmp_path) == before


def test_a_fresh_run_never_overwrites_an_earlier_run(finished, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished / "run", run)
    before = snapshot(run)
    one_line(clinic("train", "--steps", "2", *QUICK, "--out", str(run)), 2, "already holds a run", "--resume")
    assert snapshot(run) == before


def test_the_default_out_moves_to_a_new_folder_instead(tmp_path):
    first = clinic("train", "--steps", "2", *QUICK, cwd=tmp_path)
    before = snapshot(tmp_path / "runs" / "tiny")
    second = clinic("train", "--steps", "2", *QUICK, cwd=tmp_path)
    assert first.returncode == second.returncode == 0, second.stderr
    assert "runs/tiny-2" in second.stdout
    assert snapshot(tmp_path / "runs" / "tiny") == before and (tmp_path / "runs" / "tiny-2" / "summary.json").exists()


# ------------------------------------------------------------------- 5 and faults: locks and signals
def start_training(out: Path, ckpt: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "chapters.cli", "train", "--steps", "100000", *QUICK, "--out", str(out),
               "--ckpt-dir", str(ckpt), *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=CHILD_ENV)


def wait_for_checkpoint(process: subprocess.Popen, ckpt: Path, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if (ckpt / "index.json").exists() and json.loads((ckpt / "index.json").read_text())["checkpoints"]:
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    pytest.fail("no checkpoint in time")


@pytest.mark.parametrize("signum,code,name", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "Ctrl-C")])
def test_a_signal_ends_the_run_cleanly_and_a_second_run_is_locked_out(tmp_path, signum, code, name):
    out, ckpt = tmp_path / "run", tmp_path / "ck"
    process = start_training(out, ckpt)
    try:
        wait_for_checkpoint(process, ckpt)
        second = clinic("train", "--steps", "2", *QUICK, "--out", str(out), "--ckpt-dir", str(ckpt), "--resume")
        one_line(second, 2, "in use by another clinic train")
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == code and stderr.strip() == f"clinic train: interrupted ({name})"
    log = read_metrics_log(out)
    assert not log.problems and not log.truncated_tail
    assert (log.events[-1]["event"], log.events[-1]["status"]) == ("run_end", "interrupted")
    assert not list(ckpt.glob(".tmp-*"))
    verified = clinic("ckpt", "verify", str(ckpt))
    assert verified.returncode == 0 and not verified.stderr


def test_the_lock_of_a_killed_run_is_stale_and_resume_continues(tmp_path):
    out, ckpt = tmp_path / "run", tmp_path / "ck"
    process = start_training(out, ckpt)
    try:
        wait_for_checkpoint(process, ckpt)
        process.kill()
        process.communicate()
    finally:
        process.kill()
    assert (out / ".clinic-train.lock").exists()  # left behind, but nobody holds it
    resumed = clinic("train", "--steps", str(_latest(ckpt) + 2), *QUICK, "--out", str(out), "--ckpt-dir", str(ckpt),
                     "--resume")
    assert resumed.returncode == 0, resumed.stderr


def _latest(ckpt: Path) -> int:
    return json.loads((ckpt / "index.json").read_text())["latest"]


# ------------------------------------------------------------------------------------------ disk full
@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB filesystem (tmpfs) where we may mount one, else None."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def limit_file_size():
    """The deterministic stand-in for a full disk: no file may grow past 1 MB (a checkpoint is ~1.3 MB)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # then the write fails with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


def test_a_full_disk_is_one_line_and_leaves_no_temporary_file(small_disk, tmp_path):
    where = small_disk or tmp_path
    out, ckpt = where / "run", where / "ck"
    command = [sys.executable, "-m", "chapters.cli", "train", "--steps", "40", *QUICK, "--top-k", "10",
               "--out", str(out), "--ckpt-dir", str(ckpt)]
    result = subprocess.run(command, capture_output=True, text=True, env=CHILD_ENV, timeout=300,
                            preexec_fn=None if small_disk else limit_file_size)
    line = one_line(result, 1, "step-0000")
    assert ("no space left on device" in line and str(small_disk) in line) if small_disk else "file too large" in line
    assert not list(ckpt.glob(".tmp-*"))
    log = read_metrics_log(out)  # every line complete; run_end made it, since the checkpoint's space came back
    assert not log.problems and not log.truncated_tail
    assert (log.events[-1]["event"], log.events[-1]["status"]) == ("run_end", "failed")
    assert clinic("ckpt", "verify", str(ckpt)).returncode in (0, 1)  # whatever is there is listed, no traceback


def test_a_log_that_fills_the_disk_keeps_every_complete_record(small_disk):
    if small_disk is None:
        pytest.skip("needs a small tmpfs (root)")
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (2 * 2**20 - 48 * 1024))  # leave ~48 KB: about 70 records
    result = clinic("train", "--steps", "300", "--quiet", "--log-every", "1", "--out", str(small_disk / "run"))
    one_line(result, 1, "no space left on device", "metrics.jsonl")
    log = read_metrics_log(small_disk / "run")
    assert not log.problems and not log.truncated_tail and len(log.metrics) > 10


# ---------------------------------------------------------------------------------------- 7. plot -o
def test_plot_into_an_existing_directory_and_never_over_the_log(finished, tmp_path):
    shutil.copytree(finished / "run", tmp_path / "run")
    (tmp_path / "figures").mkdir()
    before = snapshot(tmp_path / "run")
    result = clinic("plot", str(tmp_path / "run"), "-o", str(tmp_path / "figures"))
    assert result.returncode == 0 and (tmp_path / "figures" / "plot.png").exists()
    assert not (tmp_path / "figures.png").exists()
    one_line(clinic("plot", str(tmp_path / "run"), "-o", str(tmp_path / "run" / "metrics.jsonl")), 2, "unsupported")
    one_line(clinic("plot", str(tmp_path / "run"), "-o", str(tmp_path / "x.xyz")), 2, "unsupported", ".png")
    assert snapshot(tmp_path / "run") == before


# ----------------------------------------------------------------------------------- 8. diagnose --follow
def test_follow_on_a_resumed_log_reports_the_new_segment(finished, tmp_path):
    log = tmp_path / "metrics.jsonl"
    shutil.copy(finished / "run" / "metrics.jsonl", log)  # segment 1, ended by its run_end
    follower = subprocess.Popen([sys.executable, "-m", "chapters.cli", "diagnose", "--follow", str(log), "--json",
                                 "--idle-timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=CHILD_ENV)
    try:
        time.sleep(0.1)  # not needed for correctness: the follower must wait for a new run_end either way
        with open(log, "a") as file:
            file.write(json.dumps({"event": "run_start", "step": 4}) + "\n")
            for step in (6, 8):
                file.write(json.dumps({"step": step, "train_loss": float("nan"), "lr": 0.01, "grad_norm": 1.0}) + "\n")
            file.write(json.dumps({"event": "run_end", "step": 8, "status": "failed"}) + "\n")
        stdout, stderr = follower.communicate(timeout=120)
    finally:
        follower.kill()
    assert follower.returncode == 0, stderr
    assert "nan_loss" in [json.loads(line)["anomaly"] for line in stdout.splitlines()]


def test_follow_refuses_a_binary_file(tmp_path):
    (tmp_path / "x.jsonl").write_bytes(b"\x00\x01\x02\x03")
    one_line(clinic("diagnose", "--follow", str(tmp_path / "x.jsonl"), "--idle-timeout", "10"), 2, "binary")


# ------------------------------------------------------------------------------------------ 9. keep-last
def test_a_reader_that_closes_the_pipe_gets_no_traceback(tmp_path):
    # `clinic diagnose RUN | head -1`: head exits after one line. The report's next write then fails with
    # EPIPE; the command must stop quietly, as a process killed by SIGPIPE does.
    log = tmp_path / "metrics.jsonl"
    log.write_text("".join(json.dumps({"step": s, "train_loss": 2.0, "lr": 1e-3}) + "\n" for s in range(1, 60)))
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the command writes a byte
    result = subprocess.run([sys.executable, "-m", "chapters.cli", "diagnose", str(log)], stdout=writer,
                            stderr=subprocess.PIPE, text=True, env=CHILD_ENV, timeout=120)
    os.close(writer)
    assert "Traceback" not in result.stderr and result.stderr == "", result.stderr
    assert result.returncode == 141


def test_one_damaged_latest_checkpoint_leaves_a_good_one(tmp_path):
    ckpt = tmp_path / "ck"
    result = clinic("train", "--steps", "6", "--quiet", "--batch-size", "8", "--eval-every", "100",
                    "--save-every", "2", "--top-k", "0", "--out", str(tmp_path / "run"), "--ckpt-dir", str(ckpt))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in ckpt.glob("*.pt")) == ["step-00000004.pt", "step-00000006.pt"]
    latest = ckpt / "step-00000006.pt"
    latest.write_bytes(latest.read_bytes()[: latest.stat().st_size // 2])  # a truncated copy
    verified = clinic("ckpt", "verify", str(ckpt))
    assert verified.returncode == 0 and "step-00000004.pt" in verified.stdout


# ------------------------------------------------------------------------------------------- torchrun
def test_sigterm_to_torchrun_is_recorded_as_interrupted(tmp_path):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m",
               "chapters.cli", "train", "--steps", "100000", "--quiet", "--batch-size", "8", "--log-every", "1",
               "--out", str(tmp_path)]
    scratch = tempfile.TemporaryDirectory()  # torchrun leaves a torchelastic_* folder in TMPDIR
    launcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**CHILD_ENV, "TMPDIR": scratch.name})
    try:
        deadline = time.monotonic() + 180
        while not ((tmp_path / "metrics.jsonl").exists() and '"train_loss"' in (tmp_path / "metrics.jsonl").read_text()):
            assert time.monotonic() < deadline and launcher.poll() is None, "training did not start"
            time.sleep(0.2)
        launcher.send_signal(signal.SIGTERM)
        launcher.communicate(timeout=120)
    finally:
        launcher.kill()
        scratch.cleanup()
    log = read_metrics_log(tmp_path)
    assert (log.events[-1]["event"], log.events[-1]["status"]) == ("run_end", "interrupted")
