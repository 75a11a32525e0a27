r"""``biject_to`` and ``transform_to``: from a :class:`~constraints.Constraint` to a
:class:`~transforms.Transform` from unconstrained space onto it (torch.distributions
.constraint_registry).

``biject_to(constraint)`` returns a bijective transform (usable for HMC: its
``log_abs_det_jacobian`` is exact); ``transform_to(constraint)`` returns a transform that need
not be bijective, only well suited to optimization (e.g. a softmax onto the simplex)::

    unconstrained = ember.zeros(3, requires_grad=True)
    scale = transform_to(constraints.positive)(unconstrained)

New constraints register with ``@biject_to.register(MyConstraintClass)`` (or a singleton
instance, whose class is used), the factory taking the constraint object.
"""

from __future__ import annotations

from numbers import Number

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Registry that links constraints to transforms."""

    def __init__(self) -> None:
        self._registry: dict = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register a factory ``factory(constraint) -> Transform`` for a subclass of
        :class:`~constraints.Constraint` (or a singleton instance: its class). Usable as a
        decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or instance, "
                f"but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """A transform from unconstrained space onto ``constraint``.

        Raises:
            NotImplementedError: if no transform is registered for the constraint's class.
        """
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint):
    def decorator(factory):
        biject_to.register(constraint, factory)
        transform_to.register(constraint, factory)
        return factory

    return decorator


@_both(constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    base = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    base = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@_both(constraints.greater_than)
@_both(constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


@_both(constraints.less_than)
def _transform_to_less_than(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


@_both(constraints.interval)
@_both(constraints.half_open_interval)
def _transform_to_interval(constraint):
    # the unit interval (as Python numbers) needs no affine step
    lower_is_0 = isinstance(constraint.lower_bound, Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(loc, scale)]
    )


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform(
        [biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths
    )


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform(
        [transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths
    )


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
