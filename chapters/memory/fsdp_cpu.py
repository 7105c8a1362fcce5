"""ZeRO / FSDP in practice: each rank keeps only a shard of the weights, gradients and optimizer state.

Plain data parallelism (DDP) keeps a *full* copy of the model, its gradients and Adam's two moments on
every rank -- about 16 bytes per parameter in mixed precision, the same on 1 GPU or 1000. ZeRO (and
PyTorch's implementation of it, FSDP) splits those tensors across the ranks instead:

* each rank stores ``1 / world_size`` of every parameter (a ``DTensor`` shard) and the Adam moments of
  that shard only -- which is where most of the memory goes;
* before a layer runs, the ranks *all-gather* its full weights, use them, and free them again;
* after backward, gradients are *reduce-scattered*: each rank receives the averaged gradient of its own
  shard only, and updates only that shard.

Same mathematics as one big process, a fraction of the memory per rank, more communication. Run it::

    torchrun --standalone --nproc_per_node=2 -m chapters.memory.fsdp_cpu   # FSDP over 2 ranks, gloo
    python -m chapters.memory.fsdp_cpu                                      # one process, the same batch

Both print (from rank 0) the parameters this process stores and the loss after ``STEPS`` steps of the same global batch;
the losses agree (up to float summation order) and each of the 2 ranks stores about half the parameters.
``fully_shard`` is FSDP's current API ("FSDP2"); it works on CPUs with gloo, which is how this runs here.
"""

from __future__ import annotations

import json

import torch
from torch.distributed.fsdp import fully_shard

from chapters.core import distributed
from chapters.core.data import make_loader, markov_corpus
from chapters.core.devices import seed_everything
from chapters.core.run import build_model

STEPS = 10
GLOBAL_BATCH = 32


def stored_parameters(model: torch.nn.Module) -> int:
    """Numbers this process holds: a sharded parameter is a DTensor whose local part is this rank's shard."""
    return sum(p.to_local().numel() if hasattr(p, "to_local") else p.numel() for p in model.parameters())


def main() -> dict:
    ranks = distributed.setup(torch.device("cpu"))
    seed_everything(0)
    corpus = markov_corpus(64)
    model = build_model("tiny", corpus.tokenizer.vocab_size)
    full = stored_parameters(model)
    if ranks.distributed:
        # Shard block by block, then the rest: each block's weights are gathered only while it runs.
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)  # built after sharding: moments of the shard only
    batches = make_loader(corpus.train, GLOBAL_BATCH // ranks.world_size, shuffle=True, seed=0,
                          rank=ranks.rank, world_size=ranks.world_size)
    for _, batch in zip(range(STEPS), batches):
        loss = model(batch["input_ids"], labels=batch["labels"])["loss"]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    result = {"world_size": ranks.world_size, "rank": ranks.rank, "parameters": full,
              "stored_parameters": stored_parameters(model),
              "loss": distributed.average(loss.detach(), ranks).item()}
    distributed.teardown(wait_for_others=True)
    return result


if __name__ == "__main__":
    outcome = main()
    if outcome["rank"] == 0:  # one writer
        print(json.dumps(outcome), flush=True)
    distributed.exit_rank(0)  # why not a plain return: see exit_rank
