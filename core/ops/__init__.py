"""Every op family; importing this package registers all ops (and installs Tensor methods)."""

from . import (  # noqa: F401
    creation,
    arithmetic,
    pointwise,
    comparison,
    conversion,
    reduction,
    softmax,
    shape,
    naming,
    indexing,
    linalg,
    random,
)
