"""What a tensor is, and every differentiable op on it."""

import numpy as _np

# torch computes IEEE results (inf, nan) silently; numpy would warn on every such kernel call.
# Setting this once is far cheaper than an errstate context around each op.
_np.seterr(divide="ignore", invalid="ignore", over="ignore", under="ignore")
