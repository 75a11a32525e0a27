"""Distribution: the abstract base class of every probability distribution (torch.distributions)."""

from __future__ import annotations

import warnings

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

_Size = ember.Size


def _error_repr(d) -> str:
    """``repr(d)`` as torch's validation errors print it: its shapes are torch.Size's."""
    return repr(d).replace("ember.Size(", "torch.Size(")


class Distribution:
    r"""Distribution is the abstract base class for probability distributions.

    Args:
        batch_shape (ember.Size): the shape over which parameters are batched.
        event_shape (ember.Size): the shape of a single sample (without batching).
        validate_args (bool, optional): whether to validate the parameters and the values passed
            to :meth:`log_prob` (and friends). Default: the class default (True, see
            :meth:`set_default_validate_args`).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Set whether validation is enabled or disabled by default.

        Args:
            value (bool): whether to enable validation.
        """
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: tuple = (),
        event_shape: tuple = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = _Size(batch_shape)
        self._event_shape = _Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {_error_repr(self)} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def _init_params(self, names: tuple, values: tuple, validate_args) -> None:
        """Set broadcast parameters ``names`` from ``values``; the batch shape is theirs (empty
        when every value is a Python number). The shared __init__ of the elementwise families."""
        from numbers import Number

        from .utils import broadcast_all

        tensors = broadcast_all(*values)
        for n, t in zip(names, tensors):
            setattr(self, n, t)
        numbers = all(isinstance(v, Number) for v in values)
        Distribution.__init__(
            self, ember.Size() if numbers else tensors[0].size(), validate_args=validate_args
        )

    def _expand_params(
        self, cls, batch_shape, _instance, names: tuple = (), copy: tuple = ()
    ) -> Distribution:
        """The shared ``expand``: a checked instance of ``cls`` (or ``_instance``) whose
        attributes ``names`` (tensors or distributions with the batch shape) are expanded to
        ``batch_shape`` and whose attributes ``copy`` are shared; the event shape is kept."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = ember.Size(batch_shape)
        for n in names:
            setattr(new, n, getattr(self, n).expand(batch_shape))
        for n in copy:
            setattr(new, n, getattr(self, n))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def expand(self, batch_shape, _instance=None) -> Distribution:
        """A new distribution instance (or ``_instance``) with batch dimensions expanded to
        ``batch_shape``; no new memory is allocated for the parameters.

        Args:
            batch_shape (ember.Size): the desired expanded size.
            _instance: new instance provided by subclasses that need to override ``.expand``.
        """
        raise NotImplementedError

    @property
    def batch_shape(self) -> ember.Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> ember.Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """A dict from argument names to the :class:`Constraint` each must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The :class:`Constraint` object representing this distribution's support."""
        raise NotImplementedError

    @property
    def mean(self) -> ember.Tensor:
        """The mean of the distribution."""
        raise NotImplementedError  # bare, as torch's (mode's names the class)

    @property
    def mode(self) -> ember.Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> ember.Tensor:
        """The variance of the distribution."""
        raise NotImplementedError  # bare, as torch's (mode's names the class)

    @property
    def stddev(self) -> ember.Tensor:
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> ember.Tensor:
        """Draw a sample of shape ``sample_shape + batch_shape + event_shape`` (or a batch of
        samples), without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        """Draw a reparameterized sample (or batch of samples): gradients flow to the
        parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> ember.Tensor:
        """Draw ``n`` samples (deprecated: use ``sample((n,))``)."""
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(_Size((n,)))

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        """The log of the probability density/mass function evaluated at ``value``.

        Args:
            value (Tensor):
        """
        raise NotImplementedError

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        """The cumulative density/mass function evaluated at ``value``.

        Args:
            value (Tensor):
        """
        raise NotImplementedError

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        """The inverse cumulative density/mass function evaluated at ``value``.

        Args:
            value (Tensor):
        """
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> ember.Tensor:
        """The tensor of all values supported by a discrete distribution, along a new leading
        dim 0 (shape ``(cardinality,) + batch_shape + event_shape`` when ``expand``, else
        ``(cardinality,) + (1,) * len(batch_shape) + event_shape``).

        Args:
            expand (bool): whether to expand the support over the batch dims.
        """
        raise NotImplementedError

    def entropy(self) -> ember.Tensor:
        """The entropy of the distribution, batched over batch_shape."""
        raise NotImplementedError

    def perplexity(self) -> ember.Tensor:
        """The perplexity (exp of the entropy) of the distribution, batched over batch_shape."""
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=()) -> ember.Size:
        """``sample_shape + batch_shape + event_shape``: the size of a sample."""
        if not isinstance(sample_shape, ember.Size):
            sample_shape = _Size(sample_shape)
        return _Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value) -> None:
        """Check ``value``'s type, shape (against event and batch shapes) and support."""
        if not isinstance(value, ember.Tensor):
            raise ValueError(  # noqa: TRY004  (torch raises ValueError)
                "The value argument to log_prob must be a Tensor"
            )
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs "
                f"{self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation.",
                stacklevel=2,
            )
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {_error_repr(self)}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"
