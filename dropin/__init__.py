"""Drop-in mode: run an unmodified PyTorch script on ember (``ember run script.py``).

``install()`` puts an import hook first on ``sys.meta_path`` that answers ``import torch`` and
every ``torch.X.Y`` with the ember module of the same path (``torch.nn`` IS ``ember.nn``), with the
few renames ember needs (``torch.autograd.anomaly_mode``, ...).
A module or attribute ember lacks raises an error naming the torch API
(``torch.foo.bar is not implemented by ember``) whose type still subclasses ModuleNotFoundError /
AttributeError, so ``hasattr`` and ``try: import ... except ImportError`` behave as under torch.

``run_script()`` runs the script the way ``python script.py`` would: as ``__main__``, with its
folder on ``sys.path[0]`` and ``sys.argv = [script, *args]``; the exit status propagates and a
traceback starts at the script's own frame.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
import types

from ..core import dtype as _dt

__all__ = [
    "NotImplementedByEmber",
    "UnsupportedAttributeError",
    "UnsupportedModuleError",
    "install",
    "installed",
    "run_script",
    "uninstall",
    "unsupported",
]


# ----------------------------------------------------------------------------- errors
class NotImplementedByEmber(NotImplementedError):
    """A torch API that ember does not implement (the message names it)."""

    def __init__(self, api: str, detail: str = "") -> None:
        self.api = api
        msg = f"{api} is not implemented by ember"
        super().__init__(f"{msg} ({detail})" if detail else msg)


class UnsupportedAttributeError(NotImplementedByEmber, AttributeError):
    """A missing attribute of an aliased torch module: still an AttributeError (hasattr works)."""

    def __init__(self, api: str, detail: str = "", *, name: str | None = None, obj=None) -> None:
        NotImplementedByEmber.__init__(self, api, detail)
        self.name = name
        self.obj = obj


class UnsupportedModuleError(NotImplementedByEmber, ModuleNotFoundError):
    """A torch module ember does not provide: still a ModuleNotFoundError (an ImportError)."""

    def __init__(self, api: str, detail: str = "") -> None:
        NotImplementedByEmber.__init__(self, api, detail)
        self.name = api  # ImportError's fields, which import machinery and users read
        self.msg = self.args[0]
        self.path = None


def unsupported(api: str, detail: str = "") -> NotImplementedByEmber:
    """The error to raise for a torch API ember does not implement (``raise unsupported(...)``)."""
    return NotImplementedByEmber(api, detail)


# ----------------------------------------------------------------------------- aliasing
# torch module path -> ember module path where the layout differs (everything else maps 1:1,
# relative to the ember module its torch parent resolved to)
RENAMES: dict[str, str] = {
    "torch.autograd.anomaly_mode": "ember.autograd.anomaly",
    "torch.serialization": "ember.core.serialization",
    "torch.random": "ember.core.random",
    "torch.linalg": "ember.core.linalg",
    "torch.fft": "ember.core.fft",
    "torch.special": "ember.core.special",
    "torch.quasirandom": "ember.core.quasirandom",
    "torch.storage": "ember.core.storage",
    # torch's private package behind torch.utils.data (`from torch.utils.data._utils.collate
    # import default_collate_fn_map`, `..._utils.worker`)
    "torch.utils.data._utils": "ember.data._utils",
}


class _AliasLoader(importlib.abc.Loader):
    """Hands an already-imported ember module to the import system under its torch name."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = module.__dict__.get("__spec__")

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        # module_from_spec always overwrites __spec__: give the ember module its own back, so its
        # relative imports and pickling keep seeing the ember name
        if self.spec is not None:
            module.__spec__ = self.spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``alias`` and ``alias.X.Y`` to ``target`` and its submodules (identity)."""

    def __init__(
        self, alias: str = "torch", target: str = "ember", guard: bool = True, torch_like=True
    ) -> None:
        self.alias = alias
        self.target = target
        self.guard = guard  # give aliased modules a __getattr__ that names the missing torch API
        self.torch_like = torch_like  # apply RENAMES (torch's layout)
        self._dot = alias + "."
        self.guarded: dict[str, tuple[types.ModuleType, object]] = {}

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != self.alias and not fullname.startswith(self._dot):
            return None
        module = self.resolve(fullname)
        is_pkg = hasattr(module, "__path__")
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module), is_package=is_pkg)

    def resolve(self, fullname: str) -> types.ModuleType:
        """The ember module that answers the import of ``fullname`` (an alias path)."""
        if fullname == self.alias:
            module = importlib.import_module(self.target)
        else:
            module = self._resolve_child(fullname)
        if self.guard:
            self._guard(module, fullname)
        return module

    def _resolve_child(self, fullname: str) -> types.ModuleType:
        key = "torch" + fullname[len(self.alias) :] if self.torch_like else ""
        if key in RENAMES:
            return importlib.import_module(RENAMES[key])
        parent_name, _, child = fullname.rpartition(".")
        parent = sys.modules.get(parent_name) or importlib.import_module(parent_name)
        ename = f"{parent.__name__}.{child}"
        try:
            return importlib.import_module(ename)
        except ModuleNotFoundError as e:
            if e.name != ename:
                raise  # a module ember needs is missing: not the torch path itself
        attr = parent.__dict__.get(child)  # e.g. ember.linalg: a module bound as an attribute
        if isinstance(attr, types.ModuleType):
            return attr
        if not self.torch_like:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        raise UnsupportedModuleError("torch" + fullname[len(self.alias) :])

    def _guard(self, module: types.ModuleType, fullname: str) -> None:
        d = module.__dict__
        if "__ember_torch_name__" in d:
            return
        torch_name = "torch" + fullname[len(self.alias) :]
        original = d.get("__getattr__")
        mod_name = module.__name__

        def __getattr__(name: str):
            if original is not None:
                try:
                    return original(name)
                except AttributeError:
                    pass
            if not name.startswith("_") and not (mod_name == "ember" and name in _NOT_TORCH):
                # torch loads some submodules lazily on attribute access; so does ember here
                sub = f"{mod_name}.{name}"
                try:
                    return importlib.import_module(sub)
                except ModuleNotFoundError as e:
                    if e.name != sub:
                        raise
            raise UnsupportedAttributeError(f"{torch_name}.{name}", name=name, obj=module)

        d["__ember_torch_name__"] = torch_name
        d["__getattr__"] = __getattr__
        self.guarded[module.__name__] = (module, original)

    def unguard(self) -> None:
        for module, original in self.guarded.values():
            d = module.__dict__
            d.pop("__ember_torch_name__", None)
            if original is None:
                d.pop("__getattr__", None)
            else:
                d["__getattr__"] = original
        self.guarded.clear()


_finders: dict[str, AliasFinder] = {}


def install(alias: str = "torch", *, guard: bool = True) -> AliasFinder:
    """Make ``import <alias>`` (default ``torch``) and its submodules import ember."""
    finder = _finders.get(alias)
    if finder is None:
        finder = _finders[alias] = AliasFinder(alias, "ember", guard)
    if finder not in sys.meta_path:
        sys.meta_path.insert(0, finder)
    existing = sys.modules.get(alias)
    import ember

    if existing is not ember:
        if existing is not None:
            raise RuntimeError(
                f"ember drop-in: '{alias}' is already imported ({existing!r}); install the "
                "alias before anything imports it"
            )
        sys.modules[alias] = finder.resolve(alias)
        if guard:
            _guard_tree(finder, ember)
    if alias == "torch":
        _dt.DISPLAY[0] = "torch"  # reprs read torch.float32, torch.Size: what the script expects
    return finder


# ember attributes that are not torch submodules (or are under another torch path)
_NOT_TORCH = {"core", "dropin", "tests", "examples", "bench", "build", "docs", "data"}


def _guard_tree(finder: AliasFinder, root: types.ModuleType) -> None:
    # `torch.nn.Foo` after a plain `import torch` never passes through the finder: give every
    # ember module reachable as an attribute path from the root its torch name now
    queue = [(root, finder.alias)]
    queue.append((root.data, finder.alias + ".utils.data"))
    seen = {id(root)}
    while queue:
        module, path = queue.pop(0)
        finder._guard(module, path)
        for name, value in list(module.__dict__.items()):
            if not isinstance(value, types.ModuleType) or id(value) in seen:
                continue
            if module is root:
                # top level: torch.linalg is ember.core.linalg, torch.multiprocessing is
                # ember.multiprocessing_ (attributes naming modules stored elsewhere)
                ok = value.__name__.startswith("ember.") and name not in _NOT_TORCH
                ok = ok and not name.startswith("_") and not name.endswith("_")
            else:  # below: true submodules only (not `import ... as F` aliases)
                ok = value.__name__ == f"{module.__name__}.{name}"
            if ok:
                seen.add(id(value))
                queue.append((value, f"{path}.{name}"))


def installed(alias: str = "torch") -> bool:
    """Whether ``install(alias)`` is in force."""
    f = _finders.get(alias)
    return f is not None and f in sys.meta_path


def uninstall(alias: str = "torch") -> None:
    """Undo ``install(alias)``: remove the hook, the aliased modules and the attribute guards."""
    finder = _finders.pop(alias, None)
    if finder is None:
        return
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    finder.unguard()
    for name in [n for n in sys.modules if n == alias or n.startswith(alias + ".")]:
        del sys.modules[name]
    if alias == "torch":
        _dt.DISPLAY[0] = "ember"


# ----------------------------------------------------------------------------- running a script
SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")


def _torch_note(exc: BaseException) -> str | None:
    """A note naming the torch API behind an ImportError/AttributeError raised on ember objects."""
    if isinstance(exc, NotImplementedByEmber):
        return None
    if isinstance(exc, ImportError) and exc.name:
        # `from torch.nn import Foo`: Python reports "cannot import name 'Foo' from 'ember.nn'"
        mod = sys.modules.get(exc.name)
        tname = getattr(mod, "__dict__", {}).get("__ember_torch_name__") if mod else None
        msg = str(exc)
        if tname and msg.startswith("cannot import name '"):
            attr = msg.split("'")[1]
            return f"{tname}.{attr} is not implemented by ember"
        return None
    if isinstance(exc, AttributeError):
        obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
        if name is None or obj is None:
            return None
        cls = obj if isinstance(obj, type) else type(obj)
        mod = cls.__module__ or ""
        if mod == "ember" or mod.startswith("ember."):
            tmod = sys.modules.get(mod)
            tname = getattr(tmod, "__dict__", {}).get("__ember_torch_name__") if tmod else None
            owner = "torch.Tensor" if cls.__name__ == "Tensor" else f"{tname or mod}.{cls.__name__}"
            return f"{owner}.{name} is not implemented by ember"
    return None


_HERE = os.path.dirname(os.path.abspath(__file__))
_SKIP = {os.path.abspath(__file__), os.path.join(os.path.dirname(_HERE), "__main__.py")}


def _skip_frame(filename: str) -> bool:
    import runpy

    f = os.path.abspath(filename)
    return f in _SKIP or f == os.path.abspath(runpy.__file__) or filename.startswith("<frozen ")


def _report(exc: BaseException) -> None:
    """Print ``exc`` as Python's top level would for the script: from the script's frame on."""
    import traceback

    tb = exc.__traceback__
    while tb is not None and _skip_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    note = _torch_note(exc)
    if note:
        if hasattr(exc, "add_note"):
            exc.add_note(note)
        else:  # Python 3.10
            exc.args = (f"{exc.args[0] if exc.args else ''} ({note})", *exc.args[1:])
    traceback.print_exception(type(exc), exc, tb)


def _run(fn, *args) -> int:
    try:
        fn(*args)
    except SystemExit:
        raise
    except KeyboardInterrupt as e:
        _report(e)
        return 130
    except BaseException as e:  # noqa: BLE001 - reported like Python's top level does
        _report(e)
        return 1
    return 0


def run_script(script: str, args: list[str] | tuple = (), *, prog: str = "ember run") -> int:
    """Run ``script`` (a PyTorch script, unchanged) on ember; returns the exit status."""
    path = os.path.abspath(script)
    if not os.path.exists(path):
        print(
            f"{prog}: can't open file {path!r}: [Errno 2] No such file or directory",
            file=sys.stderr,
        )
        return 2
    install()
    sys.argv = [script, *args]
    # what `python script.py` puts first on sys.path: the script's folder (not the cwd)
    # (python resolves a symlinked script to its real folder)
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.realpath(path))
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.append(folder)
    _add_shim()
    if os.path.isdir(path) or not path.endswith((".py", ".pyw")) and _is_zip(path):
        import runpy

        return _run(runpy.run_path, path, {}, "__main__")
    return _run(_exec_main, path)


def _is_zip(path: str) -> bool:
    import zipfile

    return zipfile.is_zipfile(path)


def _exec_main(path: str) -> None:
    # what `python script.py` does (runpy.run_path would make sys.argv[0] absolute): compile
    # the file (honouring its coding cookie) and run it as a fresh __main__ module
    import builtins
    import io
    from importlib.machinery import SourceFileLoader

    with io.open_code(path) as f:
        source = f.read()
    code = compile(source, path, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__cached__ = None
    main.__builtins__ = builtins
    main.__loader__ = SourceFileLoader("__main__", path)
    main.__spec__ = None
    old = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)  # noqa: S102 - running the user's script is the point
    finally:
        if old is not None:
            sys.modules["__main__"] = old


def run_module(name: str, args: list[str] | tuple = ()) -> int:
    """``ember run -m pkg.mod``: run a module as ``python -m`` would, with torch aliased."""
    install()
    sys.argv = [name, *args]
    if sys.path:
        sys.path[0] = os.getcwd()
    else:
        sys.path.append(os.getcwd())
    _add_shim()
    import runpy

    try:
        found = importlib.util.find_spec(name) is not None
    except ImportError:
        found = False
    if not found:
        print(f"{sys.executable}: No module named {name}", file=sys.stderr)
        return 1
    return _run(runpy.run_module, name, None, "__main__", True)


def _add_shim() -> None:
    # children started with 'spawn' or 'forkserver' re-import the script without this hook: the
    # shim folder (sys.path travels to them) gives them a `torch` package that installs it
    if SHIM_DIR not in sys.path:
        sys.path.insert(1, SHIM_DIR)
