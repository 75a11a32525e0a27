"""torch.utils.model_zoo: the old home of ``load_url`` (torch.hub.load_state_dict_from_url),
still imported by older model files (``model_zoo.load_url(model_urls['resnet18'])``)."""

from __future__ import annotations

from ..hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
