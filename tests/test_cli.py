"""The `clinic` command as a user runs it: a real subprocess, real exit codes, real stderr."""

import json
import pytest


from tests.conftest import clinic


def test_version_and_help():
    assert clinic("--version").stdout.startswith("clinic ")
    assert "train" in clinic("--help").stdout


def test_train_writes_a_summary_next_to_the_loss_floor(tmp_path):
    result = clinic("train", "--steps", "30", "--quiet", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["steps"] == 30 and summary["status"] == "completed"
    assert f"loss floor {summary['loss_floor']:.4f}" in result.stdout
    assert json.loads((tmp_path / "run" / "config.json").read_text())["steps"] == 30


@pytest.mark.parametrize("args,names", [
    (["--preset", "huge"], "tiny"),
    (["--steps", "-5"], "--steps"),
    (["--steps", "ten"], "--steps"),
    (["--batch-size", "0"], "--batch-size"),
    (["--lr", "0"], "--lr"),
    (["--lr", "-1e-3"], "--lr"),
    (["--lr", "nan"], "--lr"),
    (["--device", "tpu"], "auto, cpu"),
    (["--out", "/proc/no/such/dir"], "--out"),
    (["--batch-size", "100000"], "training examples"),
    (["--text", "/no/such/file.txt"], "not found"),
    (["--wandb"], "--wandb"),
])
def test_bad_input_is_one_line_and_exit_2(args, names):
    result = clinic("train", "--quiet", *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and names in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_wandb_is_optional_and_offline(tmp_path):
    import importlib.util

    if importlib.util.find_spec("wandb") is not None:
        pytest.skip("wandb is installed here; this checks the run without it")
    result = clinic("train", "--steps", "4", "--quiet", "--log-level", "2,3", "--wandb", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert "note: wandb is not installed" in result.stderr
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "completed"


def test_cuda_request_without_cuda_is_a_usage_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = clinic("train", "--device", "cuda", "--quiet")
    assert result.returncode == 2 and "CUDA is not available" in result.stderr


def test_unknown_verb_is_a_usage_error():
    result = clinic("fly")
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_diagnose_does_not_import_torch(tmp_path):
    """`clinic diagnose` reads a log: torch would add a second to every start (a practitioner runs it on many
    runs, an editor on save), so only the verb typed is imported, and the log reader needs no torch."""
    import subprocess
    import sys

    log = tmp_path / "metrics.jsonl"
    log.write_text("".join(json.dumps({"step": s, "train_loss": 2.0 / s}) + "\n" for s in range(1, 30)))
    probe = ("import sys; from chapters.cli import main; code = main(['diagnose', sys.argv[1], '--json']); "
             "print(code, 'torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe, str(log)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "0 False"
