import math

import torch

from chapters.core.data import markov_corpus
from chapters.core.model import GPT, IGNORE_INDEX, PRESETS, count_parameters
from chapters.core.run import build_model


def test_initial_loss_is_close_to_uniform_guess():
    """An untrained model should be maximally unsure: loss ~ ln(V). Much lower means a label leak,
    much higher means a bad initialisation."""
    corpus = markov_corpus(64)
    torch.manual_seed(0)
    model = build_model("tiny", corpus.tokenizer.vocab_size).eval()
    batch = corpus.val[list(range(0, len(corpus.val), 3))]
    with torch.no_grad():
        loss = model(**batch)["loss"].item()
    expected = math.log(corpus.tokenizer.vocab_size)
    assert abs(loss - expected) / expected < 0.05, (loss, expected)


def test_ignored_labels_do_not_change_the_loss():
    torch.manual_seed(0)
    model = build_model("tiny", 33).eval()
    input_ids = torch.randint(0, 33, (2, 16))
    labels = torch.randint(0, 33, (2, 16))
    labels[:, :5] = IGNORE_INDEX
    other = labels.clone()
    with torch.no_grad():
        loss = model(input_ids, labels=labels)["loss"]
        # Same ignored positions, different garbage in the ignored slots of the input: unchanged loss
        # means those positions are really excluded (their labels carried no weight).
        other[:, :5] = IGNORE_INDEX
        assert torch.equal(loss, model(input_ids, labels=other)["loss"])
        # ...and including them does change it.
        other[:, :5] = 0
        assert not torch.equal(loss, model(input_ids, labels=other)["loss"])


def test_loss_over_kept_positions_equals_loss_of_those_positions_alone():
    torch.manual_seed(0)
    model = build_model("tiny", 33).eval()
    input_ids = torch.randint(0, 33, (1, 16))
    labels = torch.randint(0, 33, (1, 16))
    masked = labels.clone()
    masked[:, ::2] = IGNORE_INDEX
    with torch.no_grad():
        logits = model(input_ids)["logits"]
        by_hand = torch.nn.functional.cross_entropy(logits[0, 1::2], labels[0, 1::2])
        assert torch.allclose(model(input_ids, labels=masked)["loss"], by_hand)


def test_all_ignored_labels_give_nan():
    """0/0: the NaN lesson's 'all_ignored_labels' cause starts here."""
    model = build_model("tiny", 33)
    labels = torch.full((2, 8), IGNORE_INDEX)
    assert math.isnan(model(torch.zeros(2, 8, dtype=torch.long), labels=labels)["loss"].item())


def test_presets_have_the_advertised_sizes():
    tiny, _ = count_parameters(GPT(PRESETS["tiny"]))
    small, _ = count_parameters(GPT(PRESETS["small"]))
    assert tiny < 1_000_000
    assert 9_000_000 < small < 12_000_000


def test_attention_is_causal_unless_configured_otherwise():
    """Changing a future token must not change the logits at earlier positions."""
    for causal in (True, False):
        torch.manual_seed(0)
        model = build_model("tiny", 33, causal=causal).eval()
        x = torch.randint(0, 33, (1, 12))
        y = x.clone()
        y[0, 8] = (y[0, 8] + 1) % 33
        with torch.no_grad():
            same_prefix = torch.allclose(model(x)["logits"][0, :8], model(y)["logits"][0, :8])
        assert same_prefix == causal
