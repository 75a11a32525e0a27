"""LogNormal's own module, as in torch.distributions.log_normal (the class lives beside
TransformedDistribution, whose helpers it shares)."""

from .transformed_distribution import LogNormal

__all__ = ["LogNormal"]
