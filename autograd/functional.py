"""ember.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp (to be written)."""
