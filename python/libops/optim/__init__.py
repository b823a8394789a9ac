"""libops.optim: torch.optim's SGD, Adam, AdamW (over the C optimizers) and lr_scheduler."""

from . import lr_scheduler  # noqa: F401
from .optimizer import SGD, Adam, AdamW, Optimizer  # noqa: F401
