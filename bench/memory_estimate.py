"""The memory estimator against measurement, with the course text's formula side by side.

    python bench/memory_estimate.py [--device cpu|cuda]

Measurement (chapters/memory/measure.py): on CPU, PyTorch's MemTracker (peak of live tensor bytes); on
CUDA, ``torch.cuda.max_memory_allocated``. Each row is one steady-state training step. Goal: |error| <= 5 %.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from chapters.core.model import GPT, PRESETS, count_parameters  # noqa: E402
from chapters.memory.course_text_formula import course_text_estimate  # noqa: E402
from chapters.memory.estimator import cuda_blas_workspaces, estimate_memory  # noqa: E402
from chapters.memory.measure import measure_peak  # noqa: E402

# (preset, batch, seq_len, dtype, activation checkpointing, dropout)
CONFIGS = [
    ("tiny", 8, 64, "fp32", False, 0.0),
    ("tiny", 32, 64, "fp32", False, 0.0),
    ("tiny", 16, 64, "bf16", False, 0.0),
    ("tiny", 16, 64, "fp16", False, 0.0),
    ("tiny", 32, 64, "fp32", True, 0.0),
    ("small", 2, 64, "fp32", False, 0.0),
    ("small", 8, 128, "fp32", False, 0.0),
    ("small", 8, 128, "bf16", True, 0.0),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    print(f"device {args.device}; error = (estimate - measured) / measured")
    print(f"{'preset':6} {'B':>3} {'T':>4} {'dtype':5} {'ckpt':5} {'measured MB':>12} {'ours MB':>9} {'error':>7} "
          f"{'course MB':>10} {'error':>7}")
    errors = []
    for preset, batch, seq_len, dtype, checkpointing, dropout in CONFIGS:
        config = dataclasses.replace(PRESETS[preset], vocab_size=33, dropout=dropout, grad_checkpointing=checkpointing)
        torch.manual_seed(0)
        model = GPT(config)
        measured = measure_peak(model, batch, seq_len, dtype, args.device)
        ours = estimate_memory(config, batch, seq_len, dtype, checkpointing,
                               fused_adamw=args.device.startswith("cuda"),
                               blas_workspaces=cuda_blas_workspaces(args.device)).total_bytes
        course = sum(course_text_estimate(count_parameters(model)[0], batch, seq_len, dtype).values())
        errors.append(abs(ours - measured) / measured)
        print(f"{preset:6} {batch:3d} {seq_len:4d} {dtype:5} {str(checkpointing):5} {measured / 1e6:12.2f} "
              f"{ours / 1e6:9.2f} {(ours - measured) / measured:+7.1%} {course / 1e6:10.2f} "
              f"{(course - measured) / measured:+7.1%}", flush=True)
    print(f"ours: max |error| {max(errors):.1%}, median {statistics.median(errors):.1%} over {len(errors)} configs")


if __name__ == "__main__":
    main()
