"""Loading that checks before it trusts.

A checkpoint can be wrong in ways ``torch.load`` will not tell you about: a truncated file, a file from another
model, keys that silently do not match. So we check, in order of cost:

1. **sha256** against the index: catches truncation and bit rot before we unpickle anything;
2. ``torch.load(..., weights_only=True)``: a checkpoint is data, and full pickle runs whatever code the file
   contains -- never unpickle files you did not write with full pickle;
3. **strict keys**: ``strict=False`` turns "this is the wrong model" into a silently half-random network; we
   list the missing and unexpected keys instead;
4. **one forward pass** on token ids drawn from the model's *own* vocabulary (a hard-coded ``randint(0, 1000)``
   crashes a 33-token model, or tests nothing in a 50 000-token one), checking the logits are finite.

:func:`newest_good` walks the index from the latest checkpoint backwards and returns the first that passes,
naming every one it had to skip.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import torch

from chapters.checkpoints.atomic import sha256_hex
from chapters.checkpoints.keeper import CheckpointIndexError, read_index
from chapters.core.model import GPT, GPTConfig
from chapters.errors import CheckpointError

CHECKPOINT_FORMAT = 1


def read_checkpoint(path: Path, sha256: str | None = None) -> dict:
    """The checkpoint's contents, after the hash check and a weights-only unpickling."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise CheckpointError(f"{path}: cannot be read ({err.strerror})") from None
    if sha256 is not None and sha256_hex(data) != sha256:
        raise CheckpointError(f"{path}: sha256 does not match the index (truncated or corrupt file)")
    try:
        checkpoint = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for a damaged archive; all mean "unreadable"
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointError(f"{path}: not a readable checkpoint ({first_line})") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not a Training Clinic checkpoint (format {CHECKPOINT_FORMAT} expected)")
    return checkpoint


def load_weights_strict(model: torch.nn.Module, state_dict: dict, source: str = "checkpoint") -> None:
    """Load with every key accounted for; the error lists what is missing and what is unexpected."""
    expected, found = set(model.state_dict()), set(state_dict)
    missing, unexpected = sorted(expected - found), sorted(found - expected)
    if missing or unexpected:
        raise CheckpointError(f"{source}: weights do not match the model -- missing {missing or 'none'}, "
                              f"unexpected {unexpected or 'none'}")
    try:
        model.load_state_dict(state_dict, strict=True)
    except RuntimeError as err:  # same names, different shapes
        raise CheckpointError(f"{source}: {str(err).splitlines()[-1].strip()}") from None


@torch.no_grad()
def probe_forward(model: GPT, source: str = "checkpoint") -> None:
    """One forward pass on ids from the model's own vocabulary; the logits must be finite."""
    config = model.config
    device = next(model.parameters()).device
    input_ids = torch.randint(0, config.vocab_size, (1, min(16, config.block_size)),
                              generator=torch.Generator().manual_seed(0)).to(device)
    was_training = model.training
    model.eval()
    logits = model(input_ids)["logits"]
    model.train(was_training)
    if logits.shape != (1, input_ids.shape[1], config.vocab_size) or not torch.isfinite(logits).all():
        raise CheckpointError(f"{source}: the loaded model produces non-finite or mis-shaped logits")


def verify_file(path: Path, sha256: str | None = None) -> dict:
    """All four checks on one file; returns the checkpoint."""
    checkpoint = read_checkpoint(path, sha256)
    try:
        model = GPT(GPTConfig(**checkpoint["model_config"]))
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: bad model_config ({err})") from None
    load_weights_strict(model, checkpoint["trainer"]["model"], str(path))
    probe_forward(model, str(path))
    return checkpoint


@dataclass
class Found:
    path: Path
    step: int
    checkpoint: dict
    skipped: list[str]  # one line per newer checkpoint that failed verification


def candidates(directory: Path) -> list[tuple[Path, int, str | None]]:
    """(path, step, sha256) newest first, the index's latest at the head. Without a readable index we fall
    back to the files themselves (no hash to check, the other checks still run)."""
    directory = Path(directory)
    try:
        index = read_index(directory)
    except CheckpointIndexError:
        index = None
    if index is None:
        files = sorted(directory.glob("step-*.pt"), reverse=True)
        return [(p, int(p.stem.split("-")[1]), None) for p in files if p.stem.split("-")[1].isdigit()]
    entries = sorted(index["checkpoints"], key=lambda e: (e["step"] != index["latest"], -e["step"]))
    return [(directory / e["file"], e["step"], e["sha256"]) for e in entries]


def search(directory: Path) -> tuple[Found | None, list[str]]:
    """The newest checkpoint that passes every check (or None), and one line per newer one that failed."""
    skipped = []
    for path, step, sha256 in candidates(directory):
        try:
            return Found(path, step, verify_file(path, sha256), skipped), skipped
        except CheckpointError as err:
            skipped.append(str(err))
    return None, skipped


def newest_good(directory: Path) -> Found | None:
    """The newest checkpoint in ``directory`` that passes every check, or None."""
    return search(directory)[0]
