"""Training Clinic: lessons on monitoring and debugging the training of small GPT models.

``chapters.core`` holds what every lesson shares (model, data, trainer); the other modules are lessons.
"""

__version__ = "0.1.0"
