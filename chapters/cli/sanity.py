"""``clinic sanity [--preset P]``: the four sanity checks on a fresh model of the preset and the corpus."""

from __future__ import annotations

from chapters.cli.args import seed
from chapters.core.data import make_loader, markov_corpus
from chapters.core.devices import seed_everything
from chapters.core.model import PRESETS
from chapters.core.run import DEFAULT_SEQ_LEN, build_model
from chapters.sanity.checks import check_causal, check_data, check_init_loss, check_overfit_one_batch

OVERFIT_BATCH = 4  # a handful of examples: a correct model memorises them in tens of steps


def add_parser(verbs) -> None:
    parser = verbs.add_parser("sanity", help="data, init-loss, causal-leakage and overfit-one-batch checks")
    parser.add_argument("--preset", default="tiny", choices=list(PRESETS), help="model size (default: tiny)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.set_defaults(run=run)


def run(args) -> int:
    corpus = markov_corpus(DEFAULT_SEQ_LEN[args.preset])
    seed_everything(args.seed)
    model = build_model(args.preset, corpus.tokenizer.vocab_size, dropout=0.0)  # dropout would blur the checks
    batch = next(iter(make_loader(corpus.train, OVERFIT_BATCH, shuffle=True, seed=args.seed)))
    results = [
        check_data(make_loader(corpus.train, 64, shuffle=False, seed=args.seed), model.config.vocab_size),
        check_init_loss(model, batch),
        check_causal(model),
        check_overfit_one_batch(model, batch, lr=3e-3 if args.preset == "small" else 1e-2),
    ]
    for result in results:
        print(result.verdict)
    return 0 if all(result.passed for result in results) else 1
