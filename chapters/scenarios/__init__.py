"""Every classic training failure as a reproducible broken run with its fix.

Adding a scenario is one module (copy ``healthy.py``) and one line below. The ids are a contract:
``clinic reproduce ID`` and the exercises use them.
"""

from chapters.scenarios import (
    causal_mask,
    frozen_embedding,
    healthy,
    label_shift,
    lr_too_small,
    memory_leak,
    nan,
    no_shuffle,
    oom,
    oscillation,
    overfit,
    straggler,
)

SCENARIOS = {
    module.ID: module
    for module in (
        nan,
        frozen_embedding,
        no_shuffle,
        overfit,
        oom,
        oscillation,
        lr_too_small,
        label_shift,
        causal_mask,
        memory_leak,
        straggler,
        healthy,
    )
}
