"""ember.hub against torch.hub, offline: the cache directory, downloads from file:// URLs (real
files, hash checks), load_state_dict_from_url (cache, check_hash, file_name, legacy zips), and
hubconf.py entry points from a local directory and from a repository already in the hub cache."""

import contextlib
import io
import os
import zipfile

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

HUBCONF = '''
"""A tiny hub repository."""
dependencies = {deps}


def tiny(scale=1.0):
    """A model's settings from `scale`."""
    return dict(scale=scale, double=2 * scale)


def _private():
    return None


VERSION = "1"
'''


@pytest.fixture
def home(tmp_path, monkeypatch):
    """Both frameworks' hub caches under tmp_path (TORCH_HOME), as users point them."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    return tmp_path


def _repo(where, deps="['numpy']"):
    where.mkdir(parents=True)
    (where / "hubconf.py").write_text(HUBCONF.replace("{deps}", deps))
    return where


def test_the_cache_directory_is_torchs(home, monkeypatch):
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(home / "home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "xdg"))
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(home / "xdg" / "torch" / "hub")
    ember.hub.set_dir(str(home / "mine"))
    assert ember.hub.get_dir() == str(home / "mine")


def test_download_checks_the_hash_and_never_leaves_a_partial_file(home):
    src = home / "w.bin"
    src.write_bytes(bytes(range(256)) * 100)
    url = src.as_uri()
    for m in (ember, torch):
        dst = home / f"{m.__name__}.bin"
        with pytest.raises(RuntimeError) as e:
            m.hub.download_url_to_file(url, str(dst), hash_prefix="deadbeef", progress=False)
        assert str(e.value).startswith('invalid hash value (expected "deadbeef", got "')
        assert sorted(os.listdir(home)) == ["w.bin"]  # nothing left behind, dst not made
    ember.hub.download_url_to_file(url, str(home / "ok.bin"), hash_prefix="", progress=False)
    assert (home / "ok.bin").read_bytes() == src.read_bytes()


def _state(m):
    return {"w": m.arange(6.0).reshape(2, 3), "b": m.ones(3)}


def test_load_state_dict_from_url_downloads_once(home):
    src = home / "weights.pt"
    torch.save(_state(torch), src)
    said, got = [], []
    for m in (torch, ember):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sd = m.hub.load_state_dict_from_url(src.as_uri(), progress=False)
        said.append(out.getvalue())
        got.append({k: v.numpy() for k, v in sd.items()})
        if m is torch:  # the second call finds torch's download in the shared cache
            os.remove(home / "home" / "hub" / "checkpoints" / "weights.pt")
    assert (
        said[0]
        == said[1]
        == f'Downloading: "{src.as_uri()}" to {home}/home/hub/checkpoints/weights.pt\n'
    )
    for k in got[0]:
        np.testing.assert_array_equal(got[0][k], got[1][k])
    src.unlink()  # cached: no second download
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sd = ember.hub.load_state_dict_from_url(src.as_uri(), progress=False)
    assert out.getvalue() == "" and sd["w"].shape == (2, 3)
    ember.save(_state(ember), home / "mine.pt")  # ember's own format downloads as well
    sd = ember.hub.load_state_dict_from_url((home / "mine.pt").as_uri(), progress=False)
    assert sd["b"].tolist() == [1.0, 1.0, 1.0]


def test_check_hash_file_name_and_model_dir(home):
    src = home / "plain.pt"
    torch.save(_state(torch), src)
    digest = __import__("hashlib").sha256(src.read_bytes()).hexdigest()
    good, bad = home / f"net-{digest[:10]}.pt", home / "net-0000abcd.pt"
    good.write_bytes(src.read_bytes())
    bad.write_bytes(src.read_bytes())
    sd = ember.hub.load_state_dict_from_url(
        good.as_uri(), model_dir=str(home / "models"), check_hash=True, progress=False
    )
    assert sorted(sd) == ["b", "w"] and (home / "models" / good.name).exists()
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match='invalid hash value \\(expected "0000abcd"'):
            m.hub.load_state_dict_from_url(
                bad.as_uri(), model_dir=str(home / m.__name__), check_hash=True, progress=False
            )
    named = ember.hub.load_state_dict_from_url(
        src.as_uri(), model_dir=str(home / "m2"), file_name="renamed.pt", progress=False
    )
    assert (home / "m2" / "renamed.pt").exists() and sorted(named) == ["b", "w"]


def test_a_legacy_zip_is_unpacked(home):
    torch.save(_state(torch), home / "inner.pt", _use_new_zipfile_serialization=False)
    with zipfile.ZipFile(home / "one.zip", "w") as z:
        z.write(home / "inner.pt", "inner.pt")
    got = [
        m.hub.load_state_dict_from_url(
            (home / "one.zip").as_uri(), model_dir=str(home / m.__name__), progress=False
        )
        for m in (torch, ember)
    ]
    assert sorted(got[0]) == sorted(got[1]) == ["b", "w"]
    assert (home / "ember" / "inner.pt").exists()
    np.testing.assert_array_equal(got[1]["w"].numpy(), got[0]["w"].numpy())


def test_downloaded_files_run_no_code_unless_asked(home):
    class Boom:
        def __reduce__(self):
            return (print, ("ran code",))

    torch.save({"x": Boom()}, home / "evil.pt")
    with pytest.raises(Exception, match="Weights only load failed"):
        ember.hub.load_state_dict_from_url((home / "evil.pt").as_uri(), progress=False)


def test_local_hubconf_entry_points(home):
    repo = str(_repo(home / "repo"))
    got = [m.hub.load(repo, "tiny", 2.0, source="local") for m in (torch, ember)]
    assert got[0] == got[1] == {"scale": 2.0, "double": 4.0}
    assert ember.hub.load(repo, "tiny", source="local", scale=3.0)["double"] == 6.0


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda m, r: m.hub.load(r, "nothing", source="local"), RuntimeError),
        (lambda m, r: m.hub.load(r, "VERSION", source="local"), RuntimeError),
        (lambda m, r: m.hub.load(r, 3, source="local"), ValueError),
        (lambda m, r: m.hub.load(r, "tiny", source="svn"), ValueError),
    ],
    ids=["missing", "not-callable", "not-a-name", "source"],
)
def test_local_hubconf_errors(home, call, exc):
    repo = str(_repo(home / "repo"))
    with pytest.raises(exc) as te:
        call(torch, repo)
    with pytest.raises(exc) as ee:
        call(ember, repo)
    assert str(ee.value) == str(te.value)


def test_missing_dependencies(home):
    repo = str(_repo(home / "repo", deps="['numpy', 'no_such_module_x']"))
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="^Missing dependencies: no_such_module_x$"):
            m.hub.load(repo, "tiny", source="local")


def test_a_cached_repository_needs_no_network(home, capsys):
    # a repository already in the hub cache (owner_name_ref) is used as torch uses it
    _repo(home / "home" / "hub" / "someone_tools_main")
    got = []
    for m in (torch, ember):
        names = m.hub.list("someone/tools:main", trust_repo=True, verbose=False)
        doc = m.hub.help("someone/tools:main", "tiny", trust_repo=True)
        out = m.hub.load("someone/tools:main", "tiny", 4.0, trust_repo=True, verbose=False)
        got.append((names, doc, out))
    assert (
        got[0]
        == got[1]
        == (["tiny"], "A model's settings from `scale`.", {"scale": 4.0, "double": 8.0})
    )
    with open(home / "home" / "hub" / "trusted_list") as f:
        assert f.read().split() == ["someone_tools"]  # written once, by the first to trust it
    assert ember.hub.list("someone/tools:main", verbose=False) == ["tiny"]  # trusted now


def test_an_untrusted_repository_is_asked_about(home, monkeypatch):
    _repo(home / "home" / "hub" / "someone_tools_main")
    for answer, exc, msg in (("n", Exception, "Untrusted repository."), ("maybe", ValueError,
                             "Unrecognized response maybe.")):  # fmt: skip
        monkeypatch.setattr("builtins.input", lambda prompt, a=answer: a)
        for m in (torch, ember):
            with pytest.raises(exc, match=msg):
                m.hub.load("someone/tools:main", "tiny", trust_repo=False, verbose=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert ember.hub.load("someone/tools:main", "tiny", trust_repo="check", verbose=False)
