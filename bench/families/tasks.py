"""Six model families (and two held out), each a tiny model with its own generated data -- written without ``chapters.core``.

A family is a function ``build(seed, fault) -> Task``: the data (train and validation sets), the model, and
what the log's ``run_start`` can truthfully say (number of classes or vocabulary size, the loss floor).
Classification labels come from a fixed "teacher" and are flipped to another class with probability
``NOISE``, so the best possible predictor's cross-entropy -- the loss floor -- is known exactly:
``H(NOISE) + NOISE * ln(K - 1)``. The character LM's floor is its Markov chain's entropy rate.

Faults that change the data or the model are applied here (``leak``: a share of inputs carries the
label; ``sorted``: the training set ordered by class or dialect; ``deep_sigmoid``: a deep stack without
skips; ``tiny_train``: a handful of training examples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

NOISE = 0.1


@dataclass
class Task:
    model: nn.Module
    x: torch.Tensor
    y: torch.Tensor
    val_x: torch.Tensor
    val_y: torch.Tensor
    loss: str  # "ce" (classes or next token) or "mse"
    classes: int | None  # K for a classifier, V for a language model (run_start: num_classes / vocab_size)
    floor: float | None
    lm: bool = False
    tokens_per_example: int = 1


def noisy_floor(classes: int) -> float:
    p = NOISE
    return -(1 - p) * math.log(1 - p) - p * math.log(p / (classes - 1))


def flip(labels: np.ndarray, classes: int, rng) -> np.ndarray:
    flipped = rng.random(len(labels)) < NOISE
    other = (labels + rng.integers(1, classes, len(labels))) % classes
    return np.where(flipped, other, labels)


def leak_into(x: np.ndarray, labels: np.ndarray, classes: int, share: float, rng) -> np.ndarray:
    """Append a one-hot of the (noisy) label on ``share`` of the examples, zeros elsewhere."""
    code = np.zeros((len(x), classes), np.float32)
    chosen = rng.random(len(x)) < share
    code[chosen, labels[chosen]] = 3.0
    return np.concatenate([x, code], axis=1)


def split(x, y, val=512):
    return (torch.tensor(x[val:]), torch.tensor(y[val:]), torch.tensor(x[:val]), torch.tensor(y[:val]))


def order(x, y, fault):
    """The training set as the loader will read it; ``no_shuffle`` reads it sorted by label."""
    if fault == "no_shuffle":
        keys = y if y.dim() == 1 else y[:, 0]
        index = torch.argsort(keys, stable=True)
        return x[index], y[index]
    return x, y


def relu_stack(inputs, width, outputs, depth=2, activation=nn.ReLU):
    layers, size = [], inputs
    for _ in range(depth):
        layers += [nn.Linear(size, width), activation()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, outputs))


# ----------------------------------------------------------------------------------------------- families
def mlp(seed, fault, leak=0.0) -> Task:
    rng = np.random.default_rng(seed)
    classes, features = int(rng.choice([4, 6, 10])), 12
    count = 512 + (64 if fault == "overfitting" else 2048)
    x = rng.normal(size=(count, features)).astype(np.float32)
    labels = flip((x @ rng.normal(size=(features, classes))).argmax(1), classes, rng)
    if leak:
        x = leak_into(x, labels, classes, leak, rng)
    tx, ty, vx, vy = split(x, labels)
    width, depth = (256, 2) if fault == "overfitting" else (48, 2)
    model = relu_stack(x.shape[1], width, classes, 10 if fault == "vanishing_gradients" else depth,
                       nn.Sigmoid if fault == "vanishing_gradients" else nn.ReLU)
    tx, ty = order(tx, ty, fault)
    return Task(model, tx, ty, vx, vy, "ce", classes, noisy_floor(classes))


def images(seed, fault, leak=0.0) -> Task:
    """8x8 images: class k is a bar at one of K orientations/positions, plus pixel noise."""
    rng = np.random.default_rng(seed + 100)
    classes, side = 4, 8
    count = 512 + (64 if fault == "overfitting" else 1536)
    labels = rng.integers(0, classes, count)
    grid = np.zeros((classes, side, side), np.float32)
    for k in range(classes):
        row = 1 + 2 * k
        if k % 2:
            grid[k, :, row] = 1.0
        else:
            grid[k, row, :] = 1.0
    shift = rng.integers(-1, 2, count)
    clean = np.stack([np.roll(grid[k], s, axis=int(k % 2 == 0)) for k, s in zip(labels, shift)])
    x = (clean + rng.normal(0, 0.8, clean.shape)).astype(np.float32)
    labels = flip(labels, classes, rng)
    if leak:
        chosen = rng.random(count) < leak
        x[chosen, 0, :] = 0.0
        x[chosen, 0, labels[chosen]] = 4.0
    tx, ty, vx, vy = split(x[:, None], labels)
    head = relu_stack(8 * 4 * 4, 32, classes, 8 if fault == "vanishing_gradients" else 1,
                      nn.Sigmoid if fault == "vanishing_gradients" else nn.ReLU)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), head)
    tx, ty = order(tx, ty, fault)
    return Task(model, tx, ty, vx, vy, "ce", classes, noisy_floor(classes))


def markov_text(rng, vocab, count, length, dialects=1):
    """Sequences from ``dialects`` random Markov chains; returns tokens, dialect per row, mean entropy rate."""
    chains = [rng.dirichlet(np.full(vocab, 0.3), size=vocab) for _ in range(dialects)]
    rates = []
    for chain in chains:
        stationary = np.linalg.matrix_power(chain.T, 200)[:, 0]
        stationary = stationary / stationary.sum()
        rates.append(float(-(stationary[:, None] * chain * np.log(chain + 1e-30)).sum()))
    which = np.sort(rng.integers(0, dialects, count))
    tokens = np.zeros((count, length + 1), np.int64)
    tokens[:, 0] = rng.integers(0, vocab, count)
    for t in range(length):
        cumulative = np.stack([chains[d] for d in which]).cumsum(-1)[np.arange(count), tokens[:, t]]
        tokens[:, t + 1] = (rng.random((count, 1)) < cumulative).argmax(1)
    return tokens, which, float(np.mean(rates))


class CharLM(nn.Module):
    def __init__(self, vocab, width, cell, inputs=None):
        super().__init__()
        self.embedding = nn.Embedding(inputs or vocab, 16)
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(16, width, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(self.rnn(self.embedding(tokens))[0])


def charlm(seed, fault, leak=0.0) -> Task:
    rng = np.random.default_rng(seed + 200)
    vocab, length = 12, 16
    count = 256 + (24 if fault == "overfitting" else 1024)
    dialects = 3 if fault == "no_shuffle" else 1
    tokens, which, rate = markov_text(rng, vocab, count, length, dialects)
    rng.shuffle(perm := np.arange(count))
    if fault != "no_shuffle":  # file order otherwise means nothing: the lines are independent
        tokens = tokens[perm]
    else:  # the validation lines come from every dialect; the training file is grouped by dialect
        tokens = np.concatenate([tokens[perm[:256]], tokens[np.sort(perm[256:])]])
    x, y = tokens[:, :-1].copy(), tokens[:, 1:]
    if leak:  # the next token slips into the input (as ids vocab..2*vocab-1)
        chosen = rng.random(x.shape) < leak
        x[chosen] = y[chosen] + vocab
    tx, ty, vx, vy = split(x, y, 256)
    model = CharLM(vocab, 128 if fault == "overfitting" else 32, "lstm" if seed % 2 else "gru", 2 * vocab)
    return Task(model, tx, ty, vx, vy, "ce", vocab, None if dialects > 1 else rate, lm=True,
                tokens_per_example=length)


class Encoder(nn.Module):
    def __init__(self, vocab, classes, width=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.zeros(1, 8, width))
        self.encoder = nn.TransformerEncoderLayer(width, 2, 32, dropout=0.0, batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embedding(tokens) + self.position).mean(1))


def transformer(seed, fault, leak=0.0) -> Task:
    """Sequences of 8 tokens; the class is the token group that occurs most often."""
    rng = np.random.default_rng(seed + 300)
    classes, vocab = 4, 16
    count = 512 + (48 if fault == "overfitting" else 1536)
    tokens = rng.integers(0, vocab, (count, 8))
    labels = flip(np.stack([(tokens % classes == k).sum(1) + 0.1 * k for k in range(classes)], 1).argmax(1),
                  classes, rng)
    if leak:
        chosen = rng.random(count) < leak
        tokens[chosen, 0] = vocab + labels[chosen]
    tx, ty, vx, vy = split(tokens, labels)
    model = Encoder(vocab + classes, classes, 32 if fault == "overfitting" else 16)
    tx, ty = order(tx, ty, fault)
    return Task(model, tx, ty, vx, vy, "ce", classes, noisy_floor(classes))


def linear(seed, fault, leak=0.0) -> Task:
    """Odd seeds: linear regression (MSE, floor = the noise variance); even: logistic regression."""
    rng = np.random.default_rng(seed + 400)
    features = 10
    count = 512 + (20 if fault == "overfitting" else 2048)
    x = rng.normal(size=(count, features)).astype(np.float32)
    if seed % 2 and fault not in ("no_shuffle", "leakage"):
        sigma = 0.5
        target = (x @ rng.normal(size=features) + rng.normal(0, sigma, count)).astype(np.float32)[:, None]
        if fault == "overfitting":
            x = np.concatenate([x, rng.normal(size=(count, 120)).astype(np.float32)], 1)
        tx, ty, vx, vy = split(x, target)
        return Task(nn.Linear(x.shape[1], 1), tx, ty, vx, vy, "mse", None, sigma ** 2)
    classes = 3
    labels = flip((x @ rng.normal(size=(features, classes))).argmax(1), classes, rng)
    if fault == "overfitting":
        x = np.concatenate([x, rng.normal(size=(count, 120)).astype(np.float32)], 1)
    if leak:
        x = leak_into(x, labels, classes, leak, rng)
    tx, ty, vx, vy = split(x, labels)
    tx, ty = order(tx, ty, fault)
    return Task(nn.Linear(x.shape[1], classes), tx, ty, vx, vy, "ce", classes, noisy_floor(classes))


class Residual(nn.Module):
    def __init__(self, width, activation, skip=True):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), activation(), nn.Linear(width, width))
        self.skip = skip

    def forward(self, x):
        return x + self.body(x) if self.skip else torch.sigmoid(self.body(x))


def resnet(seed, fault, leak=0.0) -> Task:
    """A residual MLP on a nonlinear teacher (the class of the largest squared projection)."""
    rng = np.random.default_rng(seed + 500)
    classes, features = 5, 8
    count = 512 + (64 if fault == "overfitting" else 2048)
    x = rng.normal(size=(count, features)).astype(np.float32)
    labels = flip(((x @ rng.normal(size=(features, classes))) ** 2).argmax(1), classes, rng)
    if leak:
        x = leak_into(x, labels, classes, leak, rng)
    tx, ty, vx, vy = split(x, labels)
    width = 128 if fault == "overfitting" else 32
    vanishing = fault == "vanishing_gradients"
    blocks = [Residual(width, nn.Sigmoid if vanishing else nn.ReLU, skip=not vanishing)
              for _ in range(6 if vanishing else 3)]
    model = nn.Sequential(nn.Linear(x.shape[1], width), *blocks, nn.ReLU(), nn.Linear(width, classes))
    tx, ty = order(tx, ty, fault)
    return Task(model, tx, ty, vx, vy, "ce", classes, noisy_floor(classes))


class WaveNet(nn.Module):
    """Two 1-D convolutions, global average pooling, then an MLP head (``head``)."""

    def __init__(self, head: nn.Module):
        super().__init__()
        self.features = nn.Sequential(nn.Conv1d(1, 8, 5, padding=2), nn.ReLU(), nn.Conv1d(8, 16, 5, padding=2),
                                      nn.ReLU(), nn.AdaptiveAvgPool1d(4), nn.Flatten())
        self.head = head

    def forward(self, x):
        return self.head(self.features(x))


def waves(seed, fault, leak=0.0) -> Task:
    """Noisy 32-sample signals; the class is the frequency of the sine hidden in them (1-D ConvNet).

    The held-out family: written before the rules were tuned on the other six, and evaluated only at the end
    (``bench/doctor_families.py --held-out``).
    """
    rng = np.random.default_rng(seed + 600)
    classes, length = 6, 32
    count = 512 + (64 if fault == "overfitting" else 2048)
    labels = rng.integers(0, classes, count)
    time = np.arange(length) / length
    phase = rng.uniform(0, 2 * np.pi, count)
    x = np.sin(2 * np.pi * (labels + 1)[:, None] * time + phase[:, None]) + rng.normal(0, 1.2, (count, length))
    labels = flip(labels, classes, rng)
    if leak:
        chosen = rng.random(count) < leak
        x[chosen, :classes] = 0.0
        x[chosen, labels[chosen]] = 5.0
    tx, ty, vx, vy = split(x[:, None].astype(np.float32), labels)
    vanishing = fault == "vanishing_gradients"
    head = relu_stack(64, 64 if fault == "overfitting" else 32, classes, 8 if vanishing else 1,
                      nn.Sigmoid if vanishing else nn.ReLU)
    tx, ty = order(tx, ty, fault)
    return Task(WaveNet(head), tx, ty, vx, vy, "ce", classes, noisy_floor(classes))


class SequenceClassifier(nn.Module):
    """A GRU reads the series; its last hidden state goes to an MLP head (``head``)."""

    def __init__(self, inputs: int, width: int, head: nn.Module):
        super().__init__()
        self.rnn = nn.GRU(inputs, width, batch_first=True)
        self.head = head

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


def drifts(seed, fault, leak=0.0) -> Task:
    """Random walks of 20 steps in the plane; the class is the direction the walk drifts in (a GRU).

    The second held-out family: written on 2026-12-02, after every rule the doctor has, and scored once.
    The drift (one noise unit a step) separates the five directions almost perfectly, so the declared floor
    (the label noise's) is what a good model reaches.
    """
    rng = np.random.default_rng(seed + 700)
    classes, length = 5, 20
    count = 512 + (64 if fault == "overfitting" else 2048)
    labels = rng.integers(0, classes, count)
    angle = 2 * np.pi * labels / classes
    drift = np.stack([np.cos(angle), np.sin(angle)], 1)
    x = np.cumsum(drift[:, None, :] + rng.normal(0, 1.0, (count, length, 2)), axis=1) / math.sqrt(length)
    labels = flip(labels, classes, rng)
    if leak:  # the label as a one-hot on extra channels at the first time step
        code = np.zeros((count, length, classes))
        chosen = rng.random(count) < leak
        code[chosen, 0, labels[chosen]] = 3.0
        x = np.concatenate([x, code], 2)
    tx, ty, vx, vy = split(x.astype(np.float32), labels)
    vanishing = fault == "vanishing_gradients"
    width = 64 if fault == "overfitting" else 24
    head = relu_stack(width, 32, classes, 8 if vanishing else 1, nn.Sigmoid if vanishing else nn.ReLU)
    tx, ty = order(tx, ty, fault)
    return Task(SequenceClassifier(x.shape[2], width, head), tx, ty, vx, vy, "ce", classes, noisy_floor(classes))


FAMILIES = {"mlp": mlp, "cnn": images, "charlm": charlm, "encoder": transformer, "linear": linear,
            "resnet": resnet}
# families kept out of tuning and looked at only for the final figure
HELD_OUT_FAMILIES = {"wave": waves, "drift": drifts}
