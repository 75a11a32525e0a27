"""torch.utils._pytree: nested containers (pytrees) as a flat list of leaves plus a TreeSpec.

The containers are list, tuple, namedtuple, dict, OrderedDict, defaultdict and deque (dicts in
insertion order), and any class given to ``register_pytree_node``; everything else, None included,
is a leaf. ``is_leaf`` stops the descent at a subtree.
"""

from __future__ import annotations

import collections
import types
from collections.abc import Callable, Iterable
from typing import Any

from ..core.tensor import Size

__all__ = [
    "LeafSpec",
    "TreeSpec",
    "register_pytree_node",
    "tree_all",
    "tree_all_only",
    "tree_any",
    "tree_any_only",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_structure",
    "tree_unflatten",
]

# type -> (flatten: node -> (children, context), unflatten: (children, context) -> node)
_NODES: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: Callable[[Any], tuple[list, Any]],
    unflatten_fn: Callable[[Iterable, Any], Any],
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Callable | None = None,
    from_dumpable_context: Callable | None = None,
    flatten_with_keys_fn: Callable | None = None,
) -> None:
    """Make ``cls`` a container: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node``."""
    if cls in _NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _NODES[cls] = (flatten_fn, unflatten_fn)


def _dict_unflatten(values, keys):
    return dict(zip(keys, values))


register_pytree_node(list, lambda x: (list(x), None), lambda v, _: list(v))
register_pytree_node(tuple, lambda x: (list(x), None), lambda v, _: tuple(v))
register_pytree_node(dict, lambda x: (list(x.values()), list(x)), _dict_unflatten)
register_pytree_node(
    collections.OrderedDict,
    lambda x: (list(x.values()), list(x)),
    lambda v, keys: collections.OrderedDict(zip(keys, v)),
)
register_pytree_node(
    collections.defaultdict,
    lambda x: (list(x.values()), [x.default_factory, list(x)]),
    lambda v, ctx: collections.defaultdict(ctx[0], zip(ctx[1], v)),
)
# torch.Size is a container of ints that rebuilds as a plain tuple, as in torch (vmap returning
# ``x.shape`` sees ints)
register_pytree_node(Size, lambda x: (list(x), None), lambda v, _: tuple(v))
register_pytree_node(
    collections.deque,
    lambda x: (list(x), x.maxlen),
    lambda v, maxlen: collections.deque(v, maxlen=maxlen),
)


def _is_namedtuple(node) -> bool:
    return isinstance(node, tuple) and hasattr(type(node), "_fields")


def _node_kind(node):
    """The registry key of ``node`` (the string 'namedtuple' for namedtuples), or None: a leaf."""
    if _is_namedtuple(node):
        return "namedtuple"
    t = type(node)
    return t if t in _NODES else None


class TreeSpec:
    """The structure of a pytree: a container ``type``, its ``context`` (dict keys, the
    namedtuple class, ...) and one TreeSpec per child. Leaves are ``LeafSpec``."""

    def __init__(self, type: Any, context: Any, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self.context = context
        self._children = list(children_specs)
        self.num_leaves = sum(c.num_leaves for c in self._children)
        self.num_nodes = 1 + sum(c.num_nodes for c in self._children)

    @property
    def children_specs(self) -> list[TreeSpec]:
        return self._children

    @property
    def num_children(self) -> int:
        return len(self._children)

    def children(self) -> list[TreeSpec]:
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        return self._children[index]

    def is_leaf(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, TreeSpec)
            and other.is_leaf() == self.is_leaf()
            and other.type == self.type
            and other.context == self.context
            and other._children == self._children
        )

    __hash__ = None  # mutable contexts (lists): like torch, not hashable

    def _repr(self, indent: int) -> str:
        name = "namedtuple" if self.type == "namedtuple" else self.type.__name__
        inner = ""
        if self._children:
            indent += 2
            parts = [c._repr(indent) for c in self._children]
            inner = ",".join([parts[0], *(f"\n{' ' * indent}{p}" for p in parts[1:])])
        return f"TreeSpec({name}, {self.context}, [{inner}])"

    def __repr__(self) -> str:
        return self._repr(0)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must match above them)."""
        out: list = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree, out: list) -> None:
        if self.is_leaf():
            out.append(tree)
            return
        kind = _node_kind(tree)
        if kind != self.type:
            want = self.context if self.type == "namedtuple" else self.type
            raise ValueError(f"Node type mismatch; expected {want}, but got {type(tree)}.")
        children, context = _flatten_node(tree, kind)
        if len(children) != len(self._children):
            raise ValueError(
                f"Node arity mismatch; expected {len(self._children)}, but got {len(children)}."
            )
        if kind in (dict, collections.OrderedDict) and context != self.context:
            missing, extra = set(self.context) - set(context), set(context) - set(self.context)
            if missing or extra:
                raise ValueError(
                    f"Node keys mismatch; missing key(s): {missing}; extra key(s): {extra}."
                )
            children = [tree[k] for k in self.context]
        for spec, child in zip(self._children, children):
            spec._up_to(child, out)

    def unflatten(self, leaves: Iterable) -> Any:
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                f"refers to a pytree that holds {self.num_leaves} items ({self})."
            )
        it = iter(leaves)
        return self._build(it)

    def _build(self, it) -> Any:
        children = [c._build(it) for c in self._children]
        if self.type == "namedtuple":
            return self.context(*children)
        return _NODES[self.type][1](children, self.context)


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed ``*``)."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_leaves = 1
        self.num_nodes = 1

    def is_leaf(self) -> bool:
        return True

    def _repr(self, indent: int) -> str:
        return "*"

    def _build(self, it) -> Any:
        return next(it)


def _flatten_node(node, kind):
    if kind == "namedtuple":
        return list(node), type(node)
    return _NODES[kind][0](node)


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeSpec]:
    """``(leaves, spec)``: the leaves in depth-first order and the structure around them."""
    leaves: list = []

    def walk(node) -> TreeSpec:
        kind = None if is_leaf is not None and is_leaf(node) else _node_kind(node)
        if kind is None:
            leaves.append(node)
            return LeafSpec()
        children, context = _flatten_node(node, kind)
        return TreeSpec(kind, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves: Iterable, treespec: TreeSpec) -> Any:
    """The pytree of ``treespec``'s structure holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
            f"TreeSpec but got item of type {type(treespec)}."
        )
    return treespec.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable, tree: Any, *rests: Any, is_leaf=None) -> Any:
    """``tree``'s structure with ``func(leaf, *matching subtrees of rests)`` at each leaf."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(func: Callable, tree: Any, *rests: Any, is_leaf=None) -> Any:
    """Call ``func`` on the leaves for its side effects; returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _only(type_or_pred) -> Callable[[Any], bool]:
    if isinstance(type_or_pred, (type, tuple, types.UnionType)):
        return lambda x: isinstance(x, type_or_pred)
    return type_or_pred


def tree_map_only(type_or_types_or_pred, /, func: Callable, tree: Any, is_leaf=None) -> Any:
    """tree_map applying ``func`` only to leaves of the given type(s) (or passing a predicate)."""
    keep = _only(type_or_types_or_pred)
    return tree_map(lambda x: func(x) if keep(x) else x, tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: Any, is_leaf=None) -> bool:
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: Any, is_leaf=None) -> bool:
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred: Callable, tree: Any, is_leaf=None) -> bool:
    keep = _only(type_or_types)
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if keep(x))


def tree_any_only(type_or_types, /, pred: Callable, tree: Any, is_leaf=None) -> bool:
    keep = _only(type_or_types)
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if keep(x))
