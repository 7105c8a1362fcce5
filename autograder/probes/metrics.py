"""Probes for ``02_metrics``: the learner's norms on prepared models, their meters driven on a simulated GPU."""

from __future__ import annotations

import torch

from autograder.probes import probe
from chapters.metrics.simulated_gpu import SimulatedGPU

# What an explanation of the course text's meter may answer (the notebook imports these).
DIRECTIONS = ("too_high", "about_right", "too_low")
CAUSES = ("asynchronous_execution", "none", "clock_resolution", "data_loading")
FIXES = ("sync_then_time_a_window", "none", "use_time_perf_counter", "call_item_every_step")


class TinyLM(torch.nn.Module):
    """A model named like the course GPT (so ``gpt_group`` applies), optionally with a tied head."""

    def __init__(self, width: int, tied: bool):
        super().__init__()
        self.token_embedding = torch.nn.Embedding(13, width)
        self.attention = torch.nn.ModuleDict({"query": torch.nn.Linear(width, width)})
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.Linear(2 * width, width))
        self.norm_final = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, 13, bias=False)
        if tied:
            self.head.weight = self.token_embedding.weight  # one tensor, registered twice


def gradients(model: torch.nn.Module) -> dict:
    """What a pickle of the model leaves out: its ``.grad`` tensors, by parameter name."""
    return {name: parameter.grad for name, parameter in model.named_parameters() if parameter.grad is not None}


def with_gradients(model: torch.nn.Module, grads: dict) -> torch.nn.Module:
    for name, parameter in model.named_parameters():
        parameter.grad = grads.get(name)
    return model


@probe("02_metrics.total_grad_norm")
def total_grad_norm(case: dict, total_grad_norm) -> dict:
    return {"norm": float(total_grad_norm(with_gradients(case["model"], case["grads"])))}


@probe("02_metrics.grad_norm_per_group")
def grad_norm_per_group(case: dict, grad_norm_per_group) -> dict:
    norms = grad_norm_per_group(with_gradients(case["model"], case["grads"]), case["grouping"])
    return {str(group): float(norm) for group, norm in dict(norms).items()}


def drive_meter(meter_class, profiles: list, reads: list[int]) -> dict:
    gpu = SimulatedGPU()
    meter = meter_class(gpu.clock, gpu.synchronize)
    readings, syncs_in_add, syncs_per_read = [], 0, []
    for step, profile in enumerate(profiles):
        gpu.queue_step(profile)
        before = gpu.synchronize_calls
        meter.add(profile.tokens)
        syncs_in_add += gpu.synchronize_calls - before
        if step in reads:
            before = gpu.synchronize_calls
            readings.append(float(meter.read()))
            syncs_per_read.append(gpu.synchronize_calls - before)
    return {"readings": readings, "syncs_in_add": syncs_in_add, "syncs_per_read": syncs_per_read}


@probe("02_metrics.window_throughput")
def window_throughput(case: dict, meter_class) -> dict:
    return drive_meter(meter_class, case["profiles"], case["reads"])


def drive_memory(meter_class, windows: list) -> list[dict]:
    gpu = SimulatedGPU()
    meter = meter_class(gpu)
    readings = []
    for events in windows:
        for action, nbytes in events:
            getattr(gpu, action)(nbytes)
        reading = meter.read()
        readings.append({key: float(reading[key]) for key in ("gpu_memory_gb", "gpu_memory_reserved_gb")})
    return readings


@probe("02_metrics.memory_meter")
def memory_meter(windows: list, meter_class) -> list[dict]:
    return drive_memory(meter_class, windows)


@probe("02_metrics.course_text_answer")
def course_text_answer(profiles: list, explain_course_text_meter) -> list[dict]:
    answers = [dict(explain_course_text_meter(profile)) for profile in profiles]
    return [{key: answer.get(key) for key in ("direction", "ratio", "cause", "fix")} for answer in answers]
