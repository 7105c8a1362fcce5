"""Four ways to log a training run, from ``print`` to structured JSON Lines -- one module per level."""
