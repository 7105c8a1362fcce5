"""What activation checkpointing saves, and what it costs: measured peak memory and step time, with and without.

    PYTHONPATH=. python bench/activation_checkpointing.py [--device cpu|cuda] [--repeats 5]

Memory is the peak of one steady-state training step (``chapters/memory/measure.py``), split into the
*floor* -- the weights and AdamW's ``m`` and ``v``, 12 bytes per parameter in fp32, which no batch size or
checkpointing changes -- and what the batch adds on top (activations, logits). Checkpointing acts only on
the second part, so its saving "of the total" depends on how big the floor is: that is why the course text's
"30-50 % of memory" cannot be a constant. Time: median of ``--repeats`` timed steps after one warm-up step;
checkpointing recomputes each block's forward pass during backward.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from chapters.core.model import GPT, PRESETS, count_parameters  # noqa: E402
from chapters.memory.measure import measure_peak  # noqa: E402

# (preset, batch, seq_len)
CONFIGS = [("tiny", 32, 64), ("tiny", 128, 64), ("small", 8, 128), ("small", 32, 128)]


def step_seconds(config, batch: int, seq_len: int, device: str, repeats: int) -> float:
    torch.manual_seed(0)
    model = GPT(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (batch, seq_len), device=device)
    times = []
    for index in range(repeats + 1):  # the first step creates AdamW's state: not timed
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        model(ids, labels=ids)["loss"].backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        if index:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"device {args.device}, fp32, AdamW; time = median of {args.repeats} steps")
    print(f"{'preset':6} {'B':>4} {'T':>4} {'floor MB':>9} {'peak MB':>8} {'ckpt MB':>8} {'total saved':>11} "
          f"{'above floor saved':>17} {'time ratio':>10}")
    for preset, batch, seq_len in CONFIGS:
        plain = dataclasses.replace(PRESETS[preset], vocab_size=33, dropout=0.0, grad_checkpointing=False)
        checkpointed = dataclasses.replace(plain, grad_checkpointing=True)
        floor = 12 * count_parameters(GPT(plain))[0]
        peaks = [measure_peak(GPT(c), batch, seq_len, "fp32", args.device) for c in (plain, checkpointed)]
        times = [step_seconds(c, batch, seq_len, args.device, args.repeats) for c in (plain, checkpointed)]
        print(f"{preset:6} {batch:4d} {seq_len:4d} {floor / 1e6:9.2f} {peaks[0] / 1e6:8.2f} {peaks[1] / 1e6:8.2f} "
              f"{1 - peaks[1] / peaks[0]:11.1%} {1 - (peaks[1] - floor) / (peaks[0] - floor):17.1%} "
              f"{times[1] / times[0]:10.2f}", flush=True)


if __name__ == "__main__":
    main()
