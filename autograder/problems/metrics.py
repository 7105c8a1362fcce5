"""Checks for ``02_metrics``: gradient norms, throughput under asynchronous execution, memory peaks, and
why the course text's tokens/sec is wrong on a GPU.

Throughput and memory are judged on :class:`chapters.metrics.simulated_gpu.SimulatedGPU`, whose fake clock
makes "correct under CUDA's asynchronous execution" a deterministic number: the judge replays the same
seeded run with the reference meters below and compares every reading.
"""

from __future__ import annotations

import math
import random

import torch

from autograder.checks import CheckFailed, register_with_hidden
from autograder.probes.metrics import CAUSES, DIRECTIONS, FIXES, TinyLM, drive_memory, drive_meter, gradients
from chapters.metrics.simulated_gpu import SimulatedGPU, StepProfile, course_text_loop

GB = 1e9


# ------------------------------------------------------------------------------------- gradient norms
def random_model_with_grads(seed: int) -> torch.nn.Module:
    """A small model with seeded gradients; some parameters frozen (no ``.grad``), scales that vary."""
    generator = torch.Generator().manual_seed(seed)
    width = 4 + seed % 7
    model = torch.nn.Sequential(torch.nn.Embedding(11, width), torch.nn.Linear(width, width),
                                torch.nn.LayerNorm(width), torch.nn.Linear(width, 3))
    for index, parameter in enumerate(model.parameters()):
        if seed and index == seed % 5:
            parameter.requires_grad_(False)  # hidden variants: one frozen parameter
            continue
        scale = 10.0 ** (int(torch.randint(-3, 3, (), generator=generator)))
        parameter.grad = torch.randn(parameter.shape, generator=generator) * scale
    return model


def reference_total_norm(seed: int) -> float:
    model = random_model_with_grads(seed)
    grads = [p for p in model.parameters() if p.grad is not None]
    return float(torch.nn.utils.clip_grad_norm_(grads, max_norm=math.inf))


class TotalGradNorm:
    @staticmethod
    def prepare(seed, folder):
        model = random_model_with_grads(seed)
        return {"model": model, "grads": gradients(model)}

    @staticmethod
    def judge(seed, observation):
        expected = reference_total_norm(seed)
        got = observation["norm"]
        if not math.isclose(got, expected, rel_tol=1e-5):
            raise CheckFailed(f"total_grad_norm gave {got:.6g}, clip_grad_norm_ gives {expected:.6g} "
                              "(L2 norm over all gradients together; skip parameters whose .grad is None)")


HINT = "the formula is in section 1; check your number against what clip_grad_norm_ returns on the same model"
register_with_hidden("02_metrics.total_grad_norm", hint=HINT)(TotalGradNorm)


def grouped_model(seed: int):
    """(model with seeded gradients, grouping function). Hidden variants: a tied head, a frozen parameter,
    a grouping of the learner's choosing rather than the course's."""
    rng = random.Random(seed)
    generator = torch.Generator().manual_seed(seed)
    model = TinyLM(width=3 + seed % 5, tied=seed != 0)  # hidden: always a tied head, the case to get right
    names = [name for name, _ in model.named_parameters()]
    table = {name: rng.choice(["alpha", "beta", "gamma"]) for name in names}
    table[rng.choice(names)] = "frozen"  # hidden: one group whose every parameter is frozen, so it has no norm
    for name, parameter in model.named_parameters():
        if seed and table[name] == "frozen":
            parameter.requires_grad_(False)
            continue
        scale = 10.0 ** rng.randint(-3, 2)
        parameter.grad = torch.randn(parameter.shape, generator=generator) * scale
    if seed == 0:
        from chapters.metrics.groups import gpt_group

        return model, gpt_group
    return model, table.__getitem__


def reference_group_norms(seed: int) -> dict[str, float]:
    model, grouping = grouped_model(seed)
    members: dict[str, list] = {}
    for name, parameter in model.named_parameters():  # a tied tensor is listed once
        if parameter.grad is not None:
            members.setdefault(grouping(name), []).append(parameter)
    return {group: float(torch.nn.utils.clip_grad_norm_(params, math.inf)) for group, params in members.items()}


class GroupGradNorms:
    @staticmethod
    def prepare(seed, folder):
        model, grouping = grouped_model(seed)
        return {"model": model, "grads": gradients(model), "grouping": grouping}

    @staticmethod
    def judge(seed, observation):
        expected = reference_group_norms(seed)
        if set(observation) != set(expected):
            raise CheckFailed(f"groups {sorted(observation)}, expected {sorted(expected)} (one key per group that "
                              "has at least one gradient; a group whose parameters are all frozen is left out)")
        for group, norm in expected.items():
            if not math.isclose(observation[group], norm, rel_tol=1e-5):
                raise CheckFailed(f"group {group!r}: {observation[group]:.6g}, clip_grad_norm_ over its parameters "
                                  f"gives {norm:.6g} (a tied weight counts once: use named_parameters())")


HINT = ("which parameters belong to which group, which groups have no gradient at all, and how many times a "
        "tied weight should count")
register_with_hidden("02_metrics.grad_norm_per_group", hint=HINT)(GroupGradNorms)


# ------------------------------------------------------------------------------------------ throughput
def throughput_run(seed: int):
    """Seeded step costs (some steps GPU-bound, some host-bound) and the steps after which the meter is read."""
    rng = random.Random(seed)
    read_every = 4 if seed == 0 else rng.randint(2, 7)
    steps = read_every * 4 + (0 if seed == 0 else rng.randint(1, read_every - 1))
    profiles = [StepProfile(host_seconds=rng.uniform(1e-3, 5e-3), device_seconds=rng.uniform(2e-4, 4e-2),
                            tokens=rng.choice([2048, 4096, 8192])) for _ in range(steps)]
    reads = [step for step in range(steps) if (step + 1) % read_every == 0 or step == steps - 1]
    return profiles, reads


class ReferenceThroughput:
    """The right meter: tokens counted on the host, one sync per reading, the clock read after it."""

    def __init__(self, clock, synchronize):
        self.clock, self.synchronize = clock, synchronize
        self.start, self.tokens = clock(), 0

    def add(self, tokens):
        self.tokens += tokens

    def read(self):
        self.synchronize()
        now = self.clock()
        rate = self.tokens / (now - self.start)
        self.start, self.tokens = now, 0
        return rate


class WindowThroughputCheck:
    @staticmethod
    def prepare(seed, folder):
        profiles, reads = throughput_run(seed)
        return {"profiles": profiles, "reads": reads}

    @staticmethod
    def judge(seed, observation):
        expected = drive_meter(ReferenceThroughput, *throughput_run(seed))["readings"]
        if observation["syncs_in_add"]:
            raise CheckFailed(f"add() synchronized {observation['syncs_in_add']} times: a sync per step stalls the "
                              "GPU's queue; count tokens on the host and sync only in read()")
        if any(count < 1 for count in observation["syncs_per_read"]):
            raise CheckFailed("read() returned without synchronizing: the clock then measures queued work, not "
                              "finished work")
        got = observation["readings"]
        if len(got) != len(expected):
            raise CheckFailed(f"{len(got)} readings for {len(expected)} reads")
        for index, (value, truth) in enumerate(zip(got, expected)):
            if not math.isclose(value, truth, rel_tol=1e-6):
                raise CheckFailed(f"reading {index + 1}: {value:.6g} tokens/s, the device did {truth:.6g} tokens/s "
                                  "(tokens since the previous read / time since the previous read, after a sync)")


HINT = ("where may the host wait for the device, and where must it? a window runs from one read to the next")
register_with_hidden("02_metrics.window_throughput", hint=HINT)(WindowThroughputCheck)


# ---------------------------------------------------------------------------------------------- memory
def memory_run(seed: int) -> list[list[tuple[str, int]]]:
    """Windows of allocator events: each step allocates activations and frees them; some windows leak."""
    rng = random.Random(seed)
    windows = []
    for window in range(5):
        events = [("allocate", rng.randint(50, 400) * 2**20)] if window == 0 else []  # weights, kept
        for _ in range(rng.randint(1, 4)):
            activations = rng.randint(10, 900) * 2**20 + rng.randint(0, 2**20)
            events += [("allocate", activations), ("free", activations)]
        if rng.random() < 0.6:
            events.append(("allocate", rng.randint(1, 200) * 2**20))  # a leak: never freed
        windows.append(events)
    return windows


class ReferenceMemory:
    def __init__(self, cuda):
        self.cuda = cuda

    def read(self):
        reading = {"gpu_memory_gb": self.cuda.max_memory_allocated() / GB,
                   "gpu_memory_reserved_gb": self.cuda.max_memory_reserved() / GB}
        self.cuda.reset_peak_memory_stats()
        return reading


class MemoryCheck:
    @staticmethod
    def prepare(seed, folder):
        return memory_run(seed)

    @staticmethod
    def judge(seed, observation):
        expected = drive_memory(ReferenceMemory, memory_run(seed))
        if len(observation) != len(expected):
            raise CheckFailed(f"{len(observation)} readings for {len(expected)} windows")
        for index, (got, truth) in enumerate(zip(observation, expected)):
            for key, value in truth.items():
                if not math.isclose(got[key], value, rel_tol=1e-9):
                    raise CheckFailed(f"window {index + 1}: {key} = {got[key]:.6g}, the window's peak is {value:.6g} GB "
                                      "(peak since the previous read, in 10**9 bytes; reset the peaks after reading)")


HINT = "a peak counter only goes up: what makes each reading the peak of its own window? (units: 10**9 bytes)"
register_with_hidden("02_metrics.memory_meter", hint=HINT)(MemoryCheck)


# ------------------------------------------------------------------ why the course text is wrong on a GPU
COURSE_TEXT_STEPS = 20
ABOUT_RIGHT = 0.1  # within 10 % of the truth


def course_text_profiles(seed: int) -> list[StepProfile]:
    """Public: a GPU-bound step. Hidden: one host-bound step (where the naive timer happens to be right) and one
    GPU-bound step, in an order drawn from the seed -- an answer that always blames the GPU fails one of them."""
    if seed == 0:
        return [StepProfile(host_seconds=2e-3, device_seconds=30e-3, tokens=8192)]
    rng = random.Random(seed)
    profiles = []
    for device_share in (rng.uniform(0.0, 0.05), rng.uniform(2.0, 20.0)):
        host = rng.uniform(1e-3, 1e-2)
        profiles.append(StepProfile(host_seconds=host, device_seconds=host * device_share,
                                    tokens=rng.choice([2048, 4096, 8192])))
    rng.shuffle(profiles)
    return profiles


def reference_explanation(profile: StepProfile) -> dict:
    gpu = SimulatedGPU()
    naive = course_text_loop(gpu, profile, COURSE_TEXT_STEPS)
    true_rate = COURSE_TEXT_STEPS * profile.tokens / gpu.clock()  # the loop syncs every step: the clock is final
    ratio = (sum(naive) / len(naive)) / true_rate
    right = abs(ratio - 1) <= ABOUT_RIGHT
    return {"direction": "about_right" if right else ("too_high" if ratio > 1 else "too_low"),
            "ratio": ratio, "cause": "none" if right else "asynchronous_execution",
            "fix": "none" if right else "sync_then_time_a_window"}


class CourseTextExplanation:
    @staticmethod
    def prepare(seed, folder):
        return course_text_profiles(seed)

    @staticmethod
    def judge(seed, observations):
        profiles = course_text_profiles(seed)
        if len(observations) != len(profiles):
            raise CheckFailed(f"expected {len(profiles)} answers, got {len(observations)}")
        for profile, observation in zip(profiles, observations):
            expected = reference_explanation(profile)
            where = f"host {profile.host_seconds * 1e3:.2f} ms, device {profile.device_seconds * 1e3:.2f} ms per step"
            for key, allowed in (("direction", DIRECTIONS), ("cause", CAUSES), ("fix", FIXES)):
                if observation[key] not in allowed:
                    raise CheckFailed(f"{key} must be one of {', '.join(allowed)}, got {observation[key]!r}")
            if not math.isclose(float(observation["ratio"]), expected["ratio"], rel_tol=0.02):
                raise CheckFailed(f"{where}: ratio {float(observation['ratio']):.4g}, but the course text's mean "
                                  f"reading is {expected['ratio']:.4g} times the true tokens/sec on this device")
            for key in ("direction", "cause", "fix"):
                if observation[key] != expected[key]:
                    raise CheckFailed(f"{where}: {key} {observation[key]!r} does not fit a ratio of "
                                      f"{expected['ratio']:.3g} (within {ABOUT_RIGHT:.0%} of 1 counts as about right; "
                                      "what does the timer measure when the host is the slow side?)")


HINT = ("measure both numbers on the simulated device of section 3 (what the course text reports, and what the "
        "device really did), then choose from the vocabularies")
register_with_hidden("02_metrics.course_text_answer", hint=HINT)(CourseTextExplanation)
