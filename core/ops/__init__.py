"""Every op family; importing this package registers all ops (and installs Tensor methods)."""

from . import (
    arithmetic,
    comparison,
    conversion,
    creation,
    indexing,
    linalg,
    naming,
    normalization,
    padding,
    pointwise,
    pooling,
    random,
    reduction,
    shape,
    softmax,
    vision,
)
