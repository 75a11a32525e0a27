"""ember.hub (torch.hub): pretrained weights from URLs and models from hub repositories.

- ``load_state_dict_from_url``: download a checkpoint once into ``get_dir()/checkpoints`` (the
  same cache torch uses: ``$TORCH_HOME/hub``, else ``$XDG_CACHE_HOME/torch/hub``, else
  ``~/.cache/torch/hub``), optionally check its SHA-256 prefix, and load it with ``ember.load``
  (torch's files load too). Unlike torch, ``weights_only`` defaults to True: a downloaded file runs
  no code unless the caller opts in.
- ``load``/``list``/``help``: the entry points of a repository's ``hubconf.py``, from a local
  directory (``source='local'``) or a GitHub repository ``owner/name[:ref]``, downloaded once into
  ``get_dir()`` and used from there afterwards (``force_reload`` downloads again). GitHub's API
  is not asked whether the ref belongs to the repository (torch's fork check).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import types
import warnings
import zipfile
from typing import Any
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url"]

_HASH = re.compile(r"-([a-f0-9]*)\.")  # name-<sha256 prefix>.ext
_TRUSTED_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir: str | None = None


def get_dir() -> str:
    """The hub cache directory: ``set_dir``'s, else ``$TORCH_HOME/hub``, else
    ``$XDG_CACHE_HOME/torch/hub``, else ``~/.cache/torch/hub``."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv("TORCH_HOME")
    if home is None:
        home = os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d) -> None:
    """Use directory ``d`` as the hub cache from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Download ``url`` to file ``dst``: written to a temporary file beside it and moved into
    place when complete (and, with ``hash_prefix``, when its SHA-256 digest starts with it), so
    ``dst`` never holds a partial or corrupt download."""
    from tqdm import tqdm

    dst = os.path.abspath(os.path.expanduser(dst))
    where = os.path.dirname(dst)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(dst) + ".", suffix=".partial", dir=where)
    try:
        with urlopen(Request(url, headers={"User-Agent": "ember.hub"})) as src:
            size = src.headers.get("Content-Length") if src.headers is not None else None
            digest = hashlib.sha256()
            with (
                os.fdopen(fd, "wb") as out,
                tqdm(
                    total=int(size) if size else None,
                    disable=not progress,
                    unit="B",
                    unit_scale=True,
                    unit_divisor=1024,
                    file=sys.stderr,
                ) as bar,
            ):
                while chunk := src.read(1 << 16):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
        if hash_prefix is not None:
            got = digest.hexdigest()
            if not got.startswith(hash_prefix):
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{got}")')
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location=None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = True,
) -> dict[str, Any]:
    """The object saved at ``url``, downloaded once into ``model_dir`` (default
    ``get_dir()/checkpoints``) under ``file_name`` (default: the URL's file name) and loaded from
    there with ``ember.load(map_location=, weights_only=)``.

    ``check_hash``: the file name must read ``name-<hex>.ext``, ``<hex>`` a prefix of the file's
    SHA-256 digest. A zip holding one plain file (torch's legacy format) is unpacked first."""
    from .core.serialization import load

    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name if file_name is not None else os.path.basename(url.split("?")[0])
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        m = _HASH.search(name) if check_hash else None
        download_url_to_file(url, cached, m.group(1) if m else None, progress=progress)
    inner = _legacy_zip_member(cached)
    if inner is not None:
        with zipfile.ZipFile(cached) as z:
            z.extract(inner, model_dir)
        cached = os.path.join(model_dir, inner)
    return load(cached, map_location=map_location, weights_only=weights_only)


def _legacy_zip_member(path: str) -> str | None:
    """The member of a zip holding just one file, torch's legacy wrapping of a checkpoint, or
    None for any other file (torch's own zip checkpoints hold a folder of records)."""
    if not zipfile.is_zipfile(path):
        return None
    with zipfile.ZipFile(path) as z:
        members = z.infolist()
    return members[0].filename if len(members) == 1 and not members[0].is_dir() else None


# ------------------------------------------------------------------------------ repositories
def _parse_repo(github: str) -> tuple[str, str, str | None]:
    repo, _, ref = github.partition(":")
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise ValueError(
            f'Invalid repository "{github}": expected "repo_owner/repo_name[:ref]", e.g. '
            '"pytorch/vision:main"'
        )
    return owner, name, ref or None


def _trusted_list() -> str:
    return os.path.join(get_dir(), "trusted_list")


def _check_trust(owner: str, name: str, trust_repo, calling_fn: str) -> None:
    entry = f"{owner}_{name}"
    path = _trusted_list()
    if trust_repo is None:
        warnings.warn(
            "You are about to download and run code from an untrusted repository. In a future "
            f"release, this won't be allowed. To add the repository to your trusted list, change "
            f"the command to {calling_fn}(..., trust_repo=False) and a command prompt will "
            "appear asking for an explicit confirmation of trust, or "
            f"{calling_fn}(..., trust_repo=True), which will assume that the prompt is to be "
            "answered with 'yes'. You can also use load(..., trust_repo='check') which will only "
            "prompt for confirmation if the repo is not already trusted. This will eventually be "
            "the default behaviour",
            stacklevel=3,
        )
        return
    trusted = set()
    if os.path.exists(path):
        with open(path) as f:
            trusted = {line.strip() for line in f}
    if trust_repo == "check" and (owner in _TRUSTED_OWNERS or entry in trusted):
        return
    if trust_repo is not True:
        answer = input(
            f"The repository {entry} does not belong to the list of trusted repositories and as "
            "such cannot be downloaded. Do you trust this repository and wish to add it to the "
            "trusted list of repositories (y/N)?"
        ).lower()
        if answer in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - torch's type
        if answer not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer}.")
    if entry not in trusted and owner not in _TRUSTED_OWNERS:
        os.makedirs(get_dir(), exist_ok=True)
        with open(path, "a") as f:
            f.write(entry + "\n")


def _repo_dir(github: str, force_reload: bool, trust_repo, calling_fn: str, verbose: bool) -> str:
    """The cached checkout of ``github`` (owner/name[:ref]), downloaded when missing."""
    owner, name, ref = _parse_repo(github)
    hub = get_dir()
    refs = [ref] if ref is not None else ["main", "master"]  # GitHub's usual default branches
    cached = [os.path.join(hub, f"{owner}_{name}_{r.replace('/', '_')}") for r in refs]
    _check_trust(owner, name, trust_repo, calling_fn)
    if not force_reload:
        for d in cached:
            if os.path.isdir(d):
                if verbose:
                    sys.stderr.write(f"Using cache found in {d}\n")
                return d
    os.makedirs(hub, exist_ok=True)
    errors = []
    for r, d in zip(refs, cached):
        archive = os.path.join(hub, f"{r.replace('/', '_')}.zip")
        url = f"https://github.com/{owner}/{name}/zipball/{r}"
        try:
            download_url_to_file(url, archive, progress=verbose)
        except OSError as e:  # urllib's errors: no such ref, no network
            errors.append(f"{url}: {e}")
            continue
        try:
            _unpack_repo(archive, d)
        finally:
            os.remove(archive)
        return d
    raise RuntimeError(
        f"could not download {github} and it is not in the hub cache ({hub}): " + "; ".join(errors)
    )


def _unpack_repo(archive: str, dst: str) -> None:
    """GitHub's zipball (one top folder) unpacked as folder ``dst``; members that would land
    outside it are refused."""
    with tempfile.TemporaryDirectory(dir=os.path.dirname(dst)) as tmp:
        with zipfile.ZipFile(archive) as z:
            root = os.path.realpath(tmp)
            for n in z.namelist():
                if not os.path.realpath(os.path.join(tmp, n)).startswith(root + os.sep):
                    raise ValueError(f"{archive}: member {n!r} would be written outside {tmp}")
            z.extractall(tmp)
        (top,) = os.listdir(tmp)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.move(os.path.join(tmp, top), dst)


def _hubconf(repo_dir: str) -> types.ModuleType:
    """The repository's hubconf.py, imported with the repository on sys.path; its
    ``dependencies`` must be importable."""
    path = os.path.join(repo_dir, "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"hubconf.py not found in {repo_dir}")
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [
        d for d in getattr(module, "dependencies", []) if importlib.util.find_spec(d) is None
    ]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(module: types.ModuleType, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")  # noqa: TRY004
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def _module_of(repo_or_dir, source, force_reload, trust_repo, calling_fn, verbose):
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _repo_dir(repo_or_dir, force_reload, trust_repo, calling_fn, verbose)
    return _hubconf(os.path.expanduser(os.fspath(repo_or_dir)))


def list(  # torch.hub.list (shadows the builtin in this module)
    github: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo="check",
    verbose: bool = True,
) -> list[str]:
    """The entry points (public callables) of the repository's hubconf.py."""
    module = _module_of(github, "github", force_reload, trust_repo, "list", verbose)
    return [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))]


def help(  # torch.hub.help
    github: str,
    model: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo="check",
) -> str | None:
    """The docstring of entry point ``model``."""
    return _entry(
        _module_of(github, "github", force_reload, trust_repo, "help", True), model
    ).__doc__


def load(
    repo_or_dir,
    model: str,
    *args,
    source: str = "github",
    trust_repo="check",
    force_reload: bool = False,
    verbose: bool = True,
    skip_validation: bool = False,
    **kwargs,
):
    """Call entry point ``model`` of the hubconf.py of ``repo_or_dir`` with ``args``/``kwargs``.

    ``source='local'``: ``repo_or_dir`` is a directory; ``'github'``: ``owner/name[:ref]``,
    taken from the hub cache or downloaded into it (``trust_repo``: True trusts it, ``'check'``
    asks unless trusted before, False always asks, None warns)."""
    module = _module_of(repo_or_dir, source, force_reload, trust_repo, "load", verbose)
    return _entry(module, model)(*args, **kwargs)
