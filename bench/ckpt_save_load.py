"""Time to save and to verify-and-load a checkpoint of the ``small`` preset (model + AdamW state + RNG).

    python bench/ckpt_save_load.py [--repeats 7]

Save = serialise + sha256 + atomic write with fsync + index update (``Checkpointer.save``).
Load = read + sha256 check + ``torch.load(weights_only=True)`` + strict load + forward probe
(``newest_good``), then ``Trainer.load_state_dict``. Medians over repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chapters.checkpoints.checkpointer import Checkpointer, resume  # noqa: E402
from chapters.core.run import build_trainer, preset_config  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    trainer = build_trainer("small", preset_config("small", steps=10, device="cpu", batch_size=2))
    trainer.train_step()  # so AdamW's moments exist and are saved
    saves, loads = [], []
    with tempfile.TemporaryDirectory() as tmp:
        checkpointer = Checkpointer(tmp, save_every=1, top_k=1)
        for repeat in range(args.repeats):
            trainer.step = repeat + 1
            start = time.perf_counter()
            path = checkpointer.save(trainer)
            saves.append(time.perf_counter() - start)
            start = time.perf_counter()
            resume(trainer, tmp, report=lambda line: None)
            loads.append(time.perf_counter() - start)
        size = path.stat().st_size
    print(f"small preset checkpoint: {size / 2**20:.1f} MiB, {args.repeats} repeats")
    save, load = statistics.median(saves), statistics.median(loads)
    print(f"save (serialise + sha256 + fsync'd atomic write + index): median {save * 1e3:.0f} ms "
          f"({size / 2**20 / save:.0f} MiB/s)")
    print(f"verified load (sha256 + weights_only load + strict + probe + restore): median {load * 1e3:.0f} ms "
          f"({size / 2**20 / load:.0f} MiB/s); load / save = {load / save:.2f}")


if __name__ == "__main__":
    main()
