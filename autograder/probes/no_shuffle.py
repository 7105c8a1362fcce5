"""Probes for ``05_no_shuffle``: the learner's answers on prepared logs, and the orders their loader draws."""

from __future__ import annotations

import torch

from autograder.probes import probe
from chapters.core.data import LineDataset


@probe("05_no_shuffle.is_epoch_periodic")
def is_epoch_periodic(run_dirs: list[str], is_epoch_periodic) -> dict:
    return {"answers": [bool(is_epoch_periodic(run_dir)) for run_dir in run_dirs]}


def numbered_dataset(rows: int) -> LineDataset:
    """Row i is all i's: a batch's first column names the rows it holds."""
    return LineDataset(torch.arange(rows).unsqueeze(1).repeat(1, 4))


@probe("05_no_shuffle.shuffled_loader")
def shuffled_loader(case: dict, shuffled_loader) -> dict:
    dataset = numbered_dataset(case["rows"])

    def order(loader_seed, epoch):
        return [batch["input_ids"][:, 0].tolist() for batch in shuffled_loader(dataset, case["batch_size"],
                                                                                loader_seed, epoch)]

    runs = {f"{s}/{e}": order(s, e) for s in case["loader_seeds"] for e in (0, 1, 2)}
    runs["again"] = order(case["loader_seeds"][0], 1)
    return runs


@probe("05_no_shuffle.compare_val")
def compare_val(pairs: list[dict], compare_val) -> list[dict]:
    answers = []
    for pair in pairs:
        answer = compare_val(pair["broken"], pair["fixed"])
        answers.append({"step": int(answer["step"]), "broken": float(answer["broken"]),
                        "fixed": float(answer["fixed"]), "better": str(answer["better"])})
    return answers
