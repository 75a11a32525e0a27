"""Chi-squared distribution (a Gamma with rate 1/2)."""

from __future__ import annotations

from typing import ClassVar

import ember

from . import constraints
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["Chi2"]


class Chi2(Gamma):
    r"""A Chi-squared distribution parameterized by shape parameter ``df``: exactly equivalent
    to ``Gamma(concentration=0.5 * df, rate=0.5)``.

    Example::

        >>> m = Chi2(ember.tensor([1.0]))
        >>> m.sample()  # Chi2 distributed with shape df=1
        tensor([ 0.1046])

    Args:
        df (float or Tensor): shape parameter of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None) -> None:
        from numbers import Number

        if isinstance(df, Number):
            super().__init__(0.5 * df, 0.5, validate_args=validate_args)
        else:
            (df,) = broadcast_all(df)
            super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> ember.Tensor:
        """Degrees of freedom."""
        return self.concentration * 2
