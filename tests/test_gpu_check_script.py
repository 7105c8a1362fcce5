"""scripts/gpu_check.sh is run only on a CUDA machine, so here it is checked for what a CPU can check: it
parses, and its figure script refuses a machine without CUDA with one line instead of a traceback."""

from __future__ import annotations

import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def test_gpu_check_script_parses():
    done = subprocess.run(["bash", "-n", str(SCRIPTS / "gpu_check.sh")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    py_compile.compile(str(SCRIPTS / "gpu_figures.py"), doraise=True)


def test_gpu_check_covers_every_cuda_only_check():
    script = (SCRIPTS / "gpu_check.sh").read_text()
    for part in ("-m gpu", "gpu_figures.py", "--cause fp16_no_scaler --device cuda", "reproduce oom --device cuda",
                 "reproduce all --device cuda"):
        assert part in script, part
    figures = (SCRIPTS / "gpu_figures.py").read_text()
    for part in ('set_sync_debug_mode("warn")', "torch.cuda.Event(enable_timing=True)", '"gpu_util"'):
        assert part in figures, part


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_gpu_figures_says_it_needs_cuda_in_one_line():
    done = subprocess.run([sys.executable, str(SCRIPTS / "gpu_figures.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == "no CUDA device: these figures need one"
