"""Write one of our runs through other tools' own writers, with those tools' own key names.

The bring-your-own-run tests and ``bench/byor_labels.py`` take a run the course generated (its
``metrics.jsonl``), write its records again through TensorBoard's ``SummaryWriter``, a Hugging Face
``TrainerState`` and Lightning's ``CSVLogger`` -- the libraries' real writers, not imitations -- and check
that the doctor gives each copy the label it gives the JSONL original. The contract keys are renamed the
way each tool spells them (``train/loss``, ``eval_loss``, ``lr-AdamW``); every other key is written as is.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from chapters.records.jsonl import read_metrics_log

SPELLED = {  # format -> contract key -> how that tool writes it
    "tensorboard": {"train_loss": "train/loss", "val_loss": "eval/loss", "lr": "train/learning_rate",
                    "grad_norm": "train/grad_norm", "epoch": "train/epoch"},
    "hf": {"train_loss": "loss", "val_loss": "eval_loss", "lr": "learning_rate"},
    "csv": {"train_loss": "train_loss", "val_loss": "val_loss", "lr": "lr-AdamW"},
}
NOT_VALUES = ("step", "timestamp")


def available(format: str) -> bool:
    """Whether the format's real writer is installed here (TensorBoard always is: a runtime dependency)."""
    module = {"tensorboard": "tensorboard", "hf": "transformers", "csv": "lightning"}[format]
    return importlib.util.find_spec(module) is not None


def spelled(format: str, record: dict) -> dict:
    names = SPELLED[format]
    return {names.get(key, key): value for key, value in record.items() if key not in NOT_VALUES}


def write_tensorboard(jsonl: Path, folder: Path) -> Path:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(folder))
    for record in read_metrics_log(jsonl).metrics:
        for tag, value in spelled("tensorboard", record).items():
            writer.add_scalar(tag, value, global_step=record["step"], walltime=record.get("timestamp"))
    writer.close()
    return folder


def write_hf(jsonl: Path, folder: Path) -> Path:
    from transformers import TrainerState

    metrics = read_metrics_log(jsonl).metrics
    history = [{**spelled("hf", record), "step": record["step"]} for record in metrics]
    last = max(record["step"] for record in metrics)
    folder.mkdir(parents=True, exist_ok=True)
    TrainerState(global_step=last, max_steps=last, log_history=history).save_to_json(str(folder / "trainer_state.json"))
    return folder


def write_csv(jsonl: Path, folder: Path) -> Path:
    from lightning.pytorch.loggers import CSVLogger

    logger = CSVLogger(str(folder), name="", version=0)
    for record in read_metrics_log(jsonl).metrics:
        logger.log_metrics(spelled("csv", record), step=record["step"])
    logger.save()
    return folder


WRITERS = {"tensorboard": write_tensorboard, "hf": write_hf, "csv": write_csv}
