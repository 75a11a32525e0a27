"""The README stays true: its tour runs, and CI runs exactly its test command."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_tour_runs(tmp_path, monkeypatch, capsys):
    tour = README.split("## A tour in 20 lines", 1)[1]
    code = re.search(r"```python\n(.*?)```", tour, re.DOTALL).group(1)
    assert len(code.strip().splitlines()) <= 22
    monkeypatch.chdir(tmp_path)  # it writes a checkpoint
    exec(compile(code, "README tour", "exec"), {"__name__": "__readme__"})  # noqa: S102 - the README's own code
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("('N', 'digit') loss ")
    assert float(out[0].split()[-1]) < 0.5  # the loss fell from ~2.3
    assert out[1] == "('digit', 'feature')"
    assert (tmp_path / "model.safetensors").is_file()


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = 'pip install -e ".[test]" && pytest'
    assert f"    {command}\n" in README
    assert ci.strip().splitlines()[-1] == command
    assert '    pip install -e ".[examples]" && python examples/cnn_digits.py\n' in README
