"""Tokens in, batches out: the character tokenizer, the corpora and the DataLoader.

Every batch is a dict ``{"input_ids": LongTensor[B, T], "labels": LongTensor[B, T]}`` where
``labels[:, t]`` is the token that follows ``input_ids[:, t]`` -- the shift happens here, once, so the
model never has to guess whether its labels are already shifted (getting this wrong is its own lesson:
the ``label_shift`` scenario).

Two corpora:

* the embedded Markov corpus (default): committed under ``datasets/markov/`` with a manifest of sha256
  hashes, and regenerated in memory when the package is installed without the repository's data folder;
* any external plain-text file (e.g. TinyShakespeare), checked against a sha256 before use.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, DistributedSampler, RandomSampler, SequentialSampler

from chapters.core import corpus
from chapters.errors import DataError

REPO_DATASETS = Path(__file__).resolve().parents[2] / "datasets"
MARKOV_DIR = REPO_DATASETS / "markov"
MARKOV_SPLITS = {"train": 1500, "val": 150}  # lines per dialect
MARKOV_SPLIT_SEEDS = {"train": 1, "val": 2}

# Published checksum of karpathy/char-rnn's tinyshakespeare/input.txt (1,115,394 bytes).
KNOWN_TEXT_SHA256 = {"tinyshakespeare": "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"}


class CharTokenizer:
    """Maps each character of a fixed alphabet to an integer id, and back."""

    def __init__(self, alphabet: str):
        if len(set(alphabet)) != len(alphabet):
            raise ValueError("alphabet has repeated characters")
        self.alphabet = alphabet
        self.ids = {c: i for i, c in enumerate(alphabet)}

    @property
    def vocab_size(self) -> int:
        return len(self.alphabet)

    def encode(self, text: str) -> list[int]:
        try:
            return [self.ids[c] for c in text]
        except KeyError as err:
            raise DataError(f"character {err.args[0]!r} is not in the tokenizer's alphabet") from None

    def decode(self, ids) -> str:
        return "".join(self.alphabet[int(i)] for i in ids)


class LineDataset(Dataset):
    """Fixed-length examples stored as one ``[N, T+1]`` tensor of token ids.

    ``__getitem__`` takes a *list* of indices and returns a whole batch: the loader pairs it with a
    ``BatchSampler`` and ``batch_size=None``, so one tensor-indexing call builds a batch instead of
    ``B`` small tensors stacked by a collate function. Same DataLoader, a fraction of the overhead.
    """

    def __init__(self, tokens: torch.Tensor):
        if tokens.dim() != 2 or tokens.shape[1] < 2:
            raise ValueError(f"expected a [N, T+1] tensor of token ids, got shape {tuple(tokens.shape)}")
        self.tokens = tokens.long()

    def __len__(self) -> int:
        return self.tokens.shape[0]

    @property
    def seq_len(self) -> int:
        return self.tokens.shape[1] - 1

    def __getitem__(self, indices) -> dict[str, torch.Tensor]:
        rows = self.tokens[indices]
        return {"input_ids": rows[:, :-1], "labels": rows[:, 1:]}


@dataclass
class Corpus:
    """A tokenized train/val pair plus what we know about it."""

    name: str
    tokenizer: CharTokenizer
    train: LineDataset
    val: LineDataset
    loss_floor: float | None  # best achievable val loss in nats/token, when the source is known


def make_loader(dataset: LineDataset, batch_size: int, shuffle: bool, seed: int, epoch: int = 0,
                rank: int = 0, world_size: int = 1) -> DataLoader:
    """One epoch of batches. ``shuffle`` is explicit: there is no silent default to forget.

    The order depends only on ``(seed, epoch)`` -- the same recipe as ``DistributedSampler`` -- so a run
    resumed in the middle of epoch 3 can rebuild epoch 3's order and skip the batches it already saw.
    Incomplete last batches are dropped so every step sees exactly ``batch_size`` examples.

    With ``world_size`` ranks (multi-process training) rank ``r`` takes every ``world_size``-th example of
    that same order, starting at ``r``: ``DistributedSampler`` with ``set_epoch``. The ranks' ``k``-th
    batches together are then exactly the ``k``-th batch of a single process with ``world_size`` times
    the batch size -- the same global batch, shared out.
    """
    if batch_size * world_size > len(dataset):
        processes = f" x {world_size} processes" if world_size > 1 else ""
        raise DataError(f"batch size {batch_size}{processes} is larger than the dataset ({len(dataset)} examples)")
    # Spread neighbouring seeds apart; wrap into torch's 63-bit seed range (changes nothing for seeds up
    # to ~10^13, and keeps any larger seed, up to 2^63-1, from overflowing).
    base_seed = seed * 100_003 % 2**63
    if world_size > 1:
        order = DistributedSampler(dataset, world_size, rank, shuffle, seed=base_seed, drop_last=True)
        order.set_epoch(epoch)  # without it every epoch repeats the first epoch's order
    elif shuffle:
        generator = torch.Generator().manual_seed((base_seed + epoch) % 2**63)
        order = RandomSampler(dataset, generator=generator)
    else:
        order = SequentialSampler(dataset)
    return DataLoader(dataset, sampler=BatchSampler(order, batch_size, drop_last=True), batch_size=None)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_markov_files(directory: Path) -> dict:
    """Generate the Markov corpus into ``directory`` and write its manifest. Returns the manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest = {"generator_version": corpus.GENERATOR_VERSION, "line_length": corpus.LINE_LENGTH, "files": {}}
    for split, lines_per_dialect in MARKOV_SPLITS.items():
        path = directory / f"{split}.txt"
        lines = corpus.generate_split(lines_per_dialect, MARKOV_SPLIT_SEEDS[split])
        path.write_text("\n".join(lines) + "\n", encoding="ascii")
        manifest["files"][path.name] = {"sha256": sha256_of(path), "bytes": path.stat().st_size, "lines": len(lines)}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _read_markov_split(split: str) -> list[str]:
    """The committed file when this is a repository checkout (verified), else a fresh in-memory copy."""
    path = MARKOV_DIR / f"{split}.txt"
    if not path.exists():
        return corpus.generate_split(MARKOV_SPLITS[split], MARKOV_SPLIT_SEEDS[split])
    manifest = json.loads((MARKOV_DIR / "manifest.json").read_text())
    if manifest["generator_version"] != corpus.GENERATOR_VERSION:
        raise DataError(f"{MARKOV_DIR} was made by generator version {manifest['generator_version']}, "
                        f"this code is version {corpus.GENERATOR_VERSION}: regenerate it "
                        "(python -m chapters.core.data)")
    if sha256_of(path) != manifest["files"][path.name]["sha256"]:
        raise DataError(f"{path} does not match its sha256 in manifest.json: the file was altered; "
                        "restore it with git or regenerate it (python -m chapters.core.data)")
    return path.read_text(encoding="ascii").splitlines()


def markov_corpus(seq_len: int = 64) -> Corpus:
    """The embedded corpus, cut to the first ``seq_len`` labels of every line."""
    if not 1 <= seq_len <= corpus.LINE_LENGTH:
        raise DataError(f"seq_len must be between 1 and {corpus.LINE_LENGTH} for the Markov corpus, got {seq_len}")
    tokenizer = CharTokenizer(corpus.ALPHABET)

    def split(name: str) -> LineDataset:
        lines = _read_markov_split(name)
        return LineDataset(torch.tensor([tokenizer.encode(line[: seq_len + 1]) for line in lines]))

    return Corpus("markov", tokenizer, split("train"), split("val"), corpus.loss_floor(seq_len))


def text_corpus(path: str | Path, seq_len: int, sha256: str | None = None, val_fraction: float = 0.1) -> Corpus:
    """A plain-text file cut into non-overlapping windows of ``seq_len + 1`` characters.

    ``sha256`` (hex) is checked before anything is read, so a truncated download or a different edition
    of the text fails loudly instead of quietly changing your results. The last ``val_fraction`` of the
    text is the validation split: contiguous, so no window straddles the two splits.
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"text corpus {path} is a directory, not a text file")
    if not path.exists():
        raise DataError(f"text corpus {path} not found: download it first (see datasets/README.md)")
    if sha256 is not None and sha256_of(path) != sha256.lower():
        raise DataError(f"text corpus {path} has sha256 {sha256_of(path)}, expected {sha256.lower()}: "
                        "the file is incomplete or a different version")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"text corpus {path} is not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise DataError(f"text corpus {path} cannot be read ({err.strerror})") from None
    tokenizer = CharTokenizer("".join(sorted(set(text))))
    window = seq_len + 1
    split_at = int(len(text) * (1 - val_fraction))

    def windows(part: str) -> LineDataset:
        count = len(part) // window
        if count == 0:
            raise DataError(f"text corpus {path} is too short for windows of {window} characters")
        ids = torch.tensor(tokenizer.encode(part[: count * window]))
        return LineDataset(ids.view(count, window))

    return Corpus(path.stem, tokenizer, windows(text[:split_at]), windows(text[split_at:]), loss_floor=None)


if __name__ == "__main__":
    written = write_markov_files(MARKOV_DIR)
    print(json.dumps(written, indent=2))
