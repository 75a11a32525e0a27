"""Every op family; importing this package registers all ops (and installs Tensor methods)."""

from . import (  # noqa: F401  (import order: creation first, the others use it)
    creation,
    arithmetic,
    conversion,
    reduction,
    shape,
    naming,
    linalg,
)
