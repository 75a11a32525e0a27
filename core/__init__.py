"""What a tensor is, and every differentiable op on it."""
