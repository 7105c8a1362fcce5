"""The benchmark's cases: (family, fault, seed), and the plan each one trains by.

Everything a case varies -- optimizer, learning rate, batch, logging interval, log style (minimal keys or
full), what ``run_start`` declares, the fault's onset and size -- is drawn from a generator seeded by the
case, so a case always trains the same way and different seeds cover different habits.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

HEALTHY = ("healthy", "healthy_noisy", "healthy_resumed", "healthy_restarts", "healthy_load")
# fault -> the label the doctor should give
FAULTS = {
    **dict.fromkeys(HEALTHY),
    "nan_loss": "nan_loss", "divergence": "divergence", "divergence_early": "divergence",
    "grad_explosion": "grad_explosion", "vanishing_gradients": "vanishing_gradients",
    "loss_plateau": "loss_plateau", "dead_network": "loss_plateau", "no_shuffle": "no_shuffle",
    "frozen_parameters": "frozen_parameters", "overfitting": "overfitting", "oscillation": "oscillation",
    "leakage": "leakage", "throughput_drop": "throughput_drop", "memory_growth": "memory_growth", "oom": "oom",
}
NOT_FOR = {  # faults a family cannot have (no ReLU layer to kill, no deep stack, no float inputs...)
    "charlm": {"vanishing_gradients", "dead_network", "grad_explosion"},
    "encoder": {"vanishing_gradients", "dead_network", "grad_explosion"},
    "linear": {"vanishing_gradients", "dead_network", "frozen_parameters"},
    # a GRU's gates saturate: inputs scaled x100 leave its gradient norm where it was (0.5-0.6 -> 0.6-1.2 on
    # seeds 0-2), so the fault would be a healthy run under another name
    "drift": {"grad_explosion"},
}
# what a minimal log must still carry for the fault to be visible at all
NEEDS = {"frozen_parameters": ["run_start"], "leakage": ["run_start"], "oom": ["oom", "run_end"],
         "grad_explosion": ["grad_norm"], "vanishing_gradients": ["grad_norm"], "dead_network": ["grad_norm"],
         "memory_growth": []}


@dataclass(frozen=True)
class Case:
    family: str
    fault: str
    seed: int

    @property
    def label(self) -> str | None:
        return FAULTS[self.fault]

    @property
    def name(self) -> str:
        return f"{self.family}-{self.fault}-s{self.seed}"

    def plan(self) -> dict:
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        fault = self.fault
        name = str(rng.choice(["sgd", "momentum", "adam", "adamw", "rmsprop", "adagrad"]))
        log_every = int(rng.choice([1, 2, 5, 10, 20, 50], p=[0.2, 0.2, 0.25, 0.2, 0.1, 0.05]))
        batch = 32
        from bench.families.train import BASE_LR
        lr = BASE_LR[name] * float(np.exp(rng.uniform(-0.5, 0.5)))
        if self.family == "linear" and name in ("sgd", "momentum"):
            lr *= 0.3
        steps = int(min(2000, max(300, 40 * log_every)))
        minimal = bool(rng.random() < 0.35)
        plan = {"optimizer": name, "lr": lr, "batch": batch, "log_every": log_every, "steps": steps,
                "minimal": minimal, "clip": 0.0, "schedule": str(rng.choice(["constant", "cosine"])),
                "onset": int(steps * rng.uniform(0.2, 0.6)), "spike": 1.0, "leak": float(rng.uniform(0.3, 0.8)),
                "declare_epoch": bool(rng.random() < 0.6), "declare_floor": bool(rng.random() < 0.7),
                "declare_classes": bool(rng.random() < 0.7), "groups": bool(rng.random() < 0.5),
                "ratios": bool(rng.random() < 0.4), "dead": False,
                "memory_key": str(rng.choice(["gpu_memory_gb", "cpu_memory_gb"])) if not minimal else "gpu_memory_gb",
                "step_time": float(rng.uniform(0.005, 0.2)), "jitter": float(rng.uniform(0.02, 0.15)),
                "memory_base": float(rng.uniform(0.2, 6.0)), "creep": float(rng.uniform(0, 0.03)),
                "eval_bump": float(rng.uniform(0, 0.04)), "stall": float(rng.uniform(2.5, 6.0)),
                "leak_growth": 0.0, "load": [], "needs": list(NEEDS.get(fault, [])), "start_keys": []}
        plan["eval_every"] = log_every * max(1, steps // log_every // int(rng.choice([10, 20, 30])))
        plan["leak"] = plan["leak"] if fault == "leakage" else plan["leak"]
        if fault == "healthy_noisy":
            plan.update(batch=int(rng.choice([2, 4])), log_every=1, lr=lr * 0.3, steps=600, eval_every=30)
        elif fault == "healthy_resumed":
            plan["resume"] = (int(steps * rng.uniform(0.5, 0.8)), int(steps * rng.uniform(0.3, 0.45)))
            plan["resume"] = (plan["resume"][0] - plan["resume"][0] % log_every,
                              plan["resume"][1] - plan["resume"][1] % log_every)
        elif fault == "healthy_restarts":
            plan["schedule"] = "restarts"
        elif fault == "healthy_load":  # a neighbour takes the CPU: slower, jittery, for a while or to the end
            for _ in range(int(rng.integers(1, 3))):  # each episode 1.2-1.8x slower; they may overlap
                start = int(rng.uniform(0.1, 0.9) * steps)
                plan["load"].append((start, int(start + rng.uniform(0.05, 1.0) * steps), float(rng.uniform(1.2, 1.8))))
        elif fault == "divergence":  # the LR jumps far too high: x30-100 for SGD, to 1-5 for adaptive optimizers
            adaptive = name in ("adam", "adamw", "rmsprop", "adagrad")
            plan["spike"] = float(rng.uniform(1, 5)) / lr if adaptive else float(rng.uniform(30, 100))
        elif fault == "divergence_early":
            plan.update(optimizer=str(rng.choice(["adam", "adamw", "rmsprop"])), lr=float(rng.uniform(2.0, 10.0)),
                        schedule="constant")
            plan["start_keys"] = ["vocab_size", "num_classes"] if rng.random() < 0.5 else []
            plan["needs"] = ["run_start"] if plan["start_keys"] else []
        elif fault == "grad_explosion":
            plan.update(clip=1.0, spike=float(rng.uniform(100, 1000)))
        elif fault == "loss_plateau":
            plan["lr"] = lr / float(rng.uniform(300, 3000))
        elif fault == "dead_network":
            plan["dead"] = True
        elif fault == "oscillation":  # tiny batches at a high learning rate, the whole run
            plan.update(optimizer=str(rng.choice(["sgd", "momentum"])), batch=int(rng.choice([1, 2])), schedule="constant",
                        clip=5.0, log_every=int(rng.choice([1, 2])), steps=600)
            plan["eval_every"] = 30
            plan["lr"] = BASE_LR[plan["optimizer"]] * float(rng.uniform(5, 15))
        elif fault == "overfitting":
            plan.update(optimizer="adam", lr=3e-3, schedule="constant")
        elif fault == "memory_growth":
            plan["leak_growth"] = float(rng.uniform(0.15, 1.5))
        elif fault == "frozen_parameters":
            plan["start_keys"] = ["total_params", "trainable_params"]
        elif fault == "leakage":
            plan["start_keys"] = ["loss_floor"]
            plan["declare_floor"] = True
        if fault == "oom":
            plan["onset"] = int(steps * rng.uniform(0.3, 0.9))
        return plan


def all_cases(seeds=(0, 1, 2), families=None) -> list[Case]:
    """Every (family, fault, seed); ``families`` defaults to the six tuned on (not the held-out ones)."""
    from bench.families.tasks import FAMILIES

    return [Case(family, fault, seed) for family in (families or FAMILIES) for fault in FAULTS
            if fault not in NOT_FOR.get(family, ()) for seed in seeds]
