import json

import pytest
import torch

from chapters.core import corpus, data
from chapters.core.data import DataError, make_loader, markov_corpus, text_corpus, write_markov_files


def test_committed_markov_files_match_regenerated_ones(tmp_path):
    committed = json.loads((data.MARKOV_DIR / "manifest.json").read_text())
    regenerated = write_markov_files(tmp_path)
    assert regenerated == committed
    for name, entry in committed["files"].items():
        assert data.sha256_of(data.MARKOV_DIR / name) == entry["sha256"]


def test_loss_floor_matches_a_monte_carlo_estimate():
    """The floor is an exact computation; check it against the chain itself: the average negative
    log-probability of sampled lines, under the true transition table, estimates the same quantity."""
    import math
    import random

    rng = random.Random(7)
    seq_len = 16
    total, count = 0.0, 0
    for dialect in corpus.DIALECTS:
        floor = dialect.position_entropies(seq_len)
        assert floor.shape == (seq_len,)
        for _ in range(400):
            line = dialect.generate_line(rng, length=seq_len)[1:]
            # Positions >= order: the exact next-letter probability under the chain.
            for t in range(dialect.order, seq_len):
                successors, probs = dialect.transitions[tuple(line[t - dialect.order:t])]
                total -= math.log(probs[successors.index(line[t])])
                count += 1
        estimate = total / count
        exact = float(floor[dialect.order:].mean())
        assert abs(estimate - exact) < 0.05, (dialect.tag, estimate, exact)
        total, count = 0.0, 0


def test_markov_corpus_shapes_and_shift():
    c = markov_corpus(32)
    batch = c.train[[0, 1, 2]]
    assert batch["input_ids"].shape == (3, 32) == batch["labels"].shape
    assert torch.equal(batch["input_ids"][:, 1:], batch["labels"][:, :-1])
    assert c.tokenizer.decode(batch["input_ids"][0])[0] == "A"  # every line starts with its tag
    assert 0.5 < c.loss_floor < 1.2


def test_altered_corpus_file_is_refused(tmp_path, monkeypatch):
    write_markov_files(tmp_path)
    with open(tmp_path / "train.txt", "r+") as f:
        f.write("B")
    monkeypatch.setattr(data, "MARKOV_DIR", tmp_path)
    with pytest.raises(DataError, match="does not match its sha256"):
        markov_corpus(16)


def test_corpus_is_generated_in_memory_without_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "MARKOV_DIR", tmp_path / "absent")
    in_memory = markov_corpus(16)
    monkeypatch.undo()
    assert torch.equal(in_memory.train.tokens, markov_corpus(16).train.tokens)


def test_loader_shuffle_is_explicit_and_seeded():
    dataset = markov_corpus(8).train
    first = lambda **kw: next(iter(make_loader(dataset, 4, **kw)))["input_ids"]
    assert torch.equal(first(shuffle=True, seed=1), first(shuffle=True, seed=1))
    assert not torch.equal(first(shuffle=True, seed=1), first(shuffle=True, seed=2))
    assert not torch.equal(first(shuffle=True, seed=1, epoch=0), first(shuffle=True, seed=1, epoch=1))
    assert torch.equal(first(shuffle=False, seed=1), dataset[[0, 1, 2, 3]]["input_ids"])


FIXTURE = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n" * 20


def test_text_corpus_with_checksum(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text(FIXTURE)
    c = text_corpus(path, seq_len=16, sha256=data.sha256_of(path))
    assert c.loss_floor is None
    assert c.tokenizer.vocab_size == len(set(FIXTURE))
    assert c.train.seq_len == 16 and len(c.val) >= 1
    assert c.tokenizer.decode(c.train.tokens[0]) == FIXTURE[:17]


def test_text_corpus_errors_name_the_problem(tmp_path):
    with pytest.raises(DataError, match="not found"):
        text_corpus(tmp_path / "missing.txt", 16)
    path = tmp_path / "tiny.txt"
    path.write_text(FIXTURE)
    with pytest.raises(DataError, match="expected 00"):
        text_corpus(path, 16, sha256="00" * 32)
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataError, match="not UTF-8"):
        text_corpus(path, 16)
