"""Shared fixtures: small, seeded runs that many tests inspect."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import settings

from chapters.core.callbacks import History
from chapters.core.run import build_trainer, preset_config

# Property tests draw the same examples on every run, so the suite's verdict depends on the code, not on the
# day (the doctor's fuzz test once drew, in one CI run only, a log that made numpy warn). To look for new
# inputs, run pytest --hypothesis-profile=explore: fresh random examples; a failure found is saved and replayed.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("fixed")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` skip cleanly on machines without CUDA."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_tiny(steps: int = 20, callbacks=None, **changes):
    """A short tiny-preset run, on the CPU unless ``device`` says otherwise; returns (trainer, history)."""
    history = History()
    config = preset_config("tiny", steps=steps, **{"device": "cpu", **changes})
    # History last: measuring callbacks add keys to the record before it is copied.
    trainer = build_trainer("tiny", config, [*(callbacks or []), history])
    trainer.fit()
    return trainer, history


REPO = Path(__file__).resolve().parents[1]


def clinic(*args, timeout=300, **kwargs):
    """Run ``clinic ARGS`` as a user would, against *this* checkout (not whatever copy is installed)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "chapters.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, **kwargs)
