"""libops.nn: neural-network helpers in torch.nn's layout.

For now only ``libops.nn.functional`` (torch.nn.functional's calls); modules
(``nn.Module``, layers, parameters) are a later step.
"""

from . import functional  # noqa: F401
