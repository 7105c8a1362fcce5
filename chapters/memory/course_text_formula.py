"""The course text's memory formula, rewritten with its flaws kept -- for comparison, do not use.

1. It counts the optimizer's state twice: once as "optimizer (m + v)" and again as "momentum + variance".
2. Its activation term, ``34 * P * (B * T / P) ** 0.75``, has no derivation: activations grow *linearly*
   in B * T and depend on the width, depth, vocabulary and attention kernel, none of which appear in it.
3. It sizes the optimizer state and gradients with the compute dtype, but under AMP those stay fp32.
4. Its printout does not add up: the TOTAL includes the second copy of the optimizer state, but no line shows
   it (:func:`course_text_printout`). A reader who adds the lines finds a TOTAL larger than their sum by
   exactly that copy -- the double count hides in the one number nobody checks.
"""

from __future__ import annotations

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}


def course_text_estimate(parameters: int, batch_size: int, seq_len: int, dtype: str = "fp32") -> dict[str, float]:
    size = BYTES[dtype]
    return {
        "model": parameters * size,
        "activations": 34 * parameters * (batch_size * seq_len / parameters) ** 0.75,
        "gradients": parameters * size,
        "optimizer (m + v)": parameters * size * 2,
        "states (momentum + variance)": parameters * size * 2,  # the same m and v, counted again
    }


def course_text_printout(parameters: int, batch_size: int, seq_len: int, dtype: str = "fp32") -> str:
    """The course text's report of its estimate: four lines and a TOTAL that is not their sum (flaw 4)."""
    parts = course_text_estimate(parameters, batch_size, seq_len, dtype)
    total = sum(parts.values())
    shown = [("Model parameters", parts["model"]), ("Activations (est)", parts["activations"]),
             ("Gradients", parts["gradients"]), ("Optimizer states", parts["optimizer (m + v)"])]
    lines = [f"Estimated memory breakdown ({dtype}):"]
    lines += [f"  {name + ':':<19}{value / 1e9:>8.2f} GB" for name, value in shown]
    lines += ["  " + "-" * 35, f"  {'TOTAL:':<19}{total / 1e9:>8.2f} GB"]
    return "\n".join(lines)
