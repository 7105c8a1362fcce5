"""The course's CPU thread rule: one thread unless the user says otherwise; a bad setting is one clear line."""

import pytest
import torch

from chapters.core.devices import DeviceError, course_cpu_threads
from chapters.core.run import build_trainer, preset_config
from tests.conftest import clinic


@pytest.mark.parametrize(("environment", "threads"), [
    ({}, 1),
    ({"CLINIC_CPU_THREADS": "3"}, 3),
    ({"CLINIC_CPU_THREADS": "default"}, None),
    ({"OMP_NUM_THREADS": "2"}, None),  # torch already follows it
    ({"OMP_NUM_THREADS": "2", "CLINIC_CPU_THREADS": "1"}, 1),  # the course's own variable wins
])
def test_the_rule(environment, threads, monkeypatch):
    for name in ("CLINIC_CPU_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert course_cpu_threads() == threads


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_a_bad_value_names_the_variable(bad, monkeypatch):
    monkeypatch.setenv("CLINIC_CPU_THREADS", bad)
    with pytest.raises(DeviceError, match="CLINIC_CPU_THREADS"):
        course_cpu_threads()


def test_a_cpu_trainer_applies_the_rule(monkeypatch):
    previous = torch.get_num_threads()
    monkeypatch.setenv("CLINIC_CPU_THREADS", "1")
    try:
        torch.set_num_threads(2)
        build_trainer("tiny", preset_config("tiny", steps=1, device="cpu"))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(previous)


def test_clinic_train_with_a_bad_thread_count_is_a_usage_error(monkeypatch):
    monkeypatch.setenv("CLINIC_CPU_THREADS", "lots")
    result = clinic("train", "--steps", "1")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "CLINIC_CPU_THREADS='lots'" in result.stderr
