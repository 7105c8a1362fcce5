"""Where do the train and the val loss of a real leak sit against the loss floor -- with dropout too?

    OMP_NUM_THREADS=1 python bench/leak_with_dropout.py [--out runs/leak-dropout] [--seeds 0,1]

A small transformer classifier (eight classes of Gaussian blobs, 20 % of the labels resampled at random, so
the floor is known exactly) is fed its noisy label through a blurred extra feature -- a leak of graded
strength -- with dropout 0, 0.1 or 0.2. Dropout makes the train loss (measured in train mode) read above
the val loss (eval mode), which is the one way a real leak might keep its train loss on the floor while its
val loss goes below: the leakage rule asks both to be below (``chapters/doctor/leakage.py``). Prints, per
run, both losses over the second half of the evaluations as multiples of the floor and the doctor's
findings. Written for issue 15 (2026-12-02); the training code shares nothing with ``chapters.core``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chapters.doctor import diagnose  # noqa: E402
from chapters.records.runlog import RunLog  # noqa: E402

CLASSES, FEATURES, PATCHES, WIDTH = 8, 32, 8, 32
NOISE = 0.2  # share of labels resampled uniformly
STRENGTHS = (1.0, 1.5, 2.0, 3.0)  # how much of the one-hot label survives in the leaked feature
DROPOUTS = (0.0, 0.1, 0.2)


class PatchClassifier(nn.Module):
    """The feature vector cut into eight patches, one transformer encoder layer, mean-pooled."""

    def __init__(self, dropout: float):
        super().__init__()
        self.embed = nn.Linear(FEATURES // PATCHES, WIDTH)
        self.position = nn.Parameter(torch.zeros(1, PATCHES, WIDTH))
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.TransformerEncoderLayer(WIDTH, 4, 64, dropout=dropout, batch_first=True)
        self.head = nn.Linear(WIDTH, CLASSES)

    def forward(self, x):
        patches = self.drop(self.embed(x.view(len(x), PATCHES, -1)) + self.position)
        return self.head(self.encoder(patches).mean(1))


def noisy_floor() -> float:
    right, wrong = 1 - NOISE + NOISE / CLASSES, NOISE / CLASSES
    return -(right * math.log(right) + (CLASSES - 1) * wrong * math.log(wrong))


def train(strength: float, dropout: float, seed: int, out: Path) -> Path:
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    labels = rng.integers(0, CLASSES, 6000)
    x = rng.normal(0, 1.5, (CLASSES, FEATURES))[labels] + rng.normal(0, 1, (6000, FEATURES))
    labels = np.where(rng.random(6000) < NOISE, rng.integers(0, CLASSES, 6000), labels)
    x[:, :CLASSES] += strength * np.eye(CLASSES)[labels] + rng.normal(0, 1, (6000, CLASSES))  # the leak
    x, y = torch.tensor(x, dtype=torch.float32), torch.tensor(labels)
    model = PatchClassifier(dropout)
    optimizer = torch.optim.AdamW(model.parameters(), 2e-3)
    out.mkdir(parents=True, exist_ok=True)
    lines = [{"event": "run_start", "step": 0, "num_classes": CLASSES, "loss_floor": noisy_floor()}]
    window = []
    for step in range(1, 1501):
        batch = torch.randint(600, 6000, (32,))
        model.train()
        loss = F.cross_entropy(model(x[batch]), y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        window.append(loss.item())
        if step % 10 == 0:
            lines.append({"step": step, "train_loss": float(np.mean(window)), "lr": 2e-3})
            window = []
        if step % 50 == 0:
            model.eval()
            with torch.no_grad():
                lines.append({"step": step, "val_loss": F.cross_entropy(model(x[:600]), y[:600]).item()})
    (out / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/leak-dropout"))
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args()
    torch.set_num_threads(1)
    jobs = [(s, d, seed, args.out / f"leak{s}-dropout{d}-s{seed}")
            for s in STRENGTHS for d in DROPOUTS for seed in map(int, args.seeds.split(","))]
    with Pool(2) as pool:
        folders = pool.starmap(train, jobs)
    print("| run | val / floor | train / floor | doctor |\n|---|---|---|---|")
    for folder in folders:
        run = RunLog.load(folder)
        floor = run.info("loss_floor")
        val = run.evals.set_index("step")["val_loss"]
        since = val.index[len(val) // 2]
        late_train = run.train.loc[run.train["step"] >= since, "train_loss"]
        found = [f.anomaly for f in diagnose(folder).findings] or ["healthy"]
        print(f"| {folder.name} | {val.loc[since:].median() / floor:.2f} | {late_train.median() / floor:.2f} | "
              f"{', '.join(found)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
