"""The public Python API: exactly ``assay.__all__``, imported lazily, and the README's examples run as written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import assay

README = Path(__file__).resolve().parents[1] / "README.md"
DEMO = Path(assay.__file__).parent / "_datasets" / "demo"
HEAVY = ("aiohttp", "diskcache", "litellm", "openai")


def test_import_assay_loads_no_model_client_cache_library_or_pipeline() -> None:
    code = (
        "import sys, assay\n"
        f"heavy = {HEAVY!r} + ('assay.pipelines', 'assay.judge', 'assay.formats')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_public_surface_is_exactly_all() -> None:
    assert len(set(assay.__all__)) == len(assay.__all__)
    public = {name for name in dir(assay) if not name.startswith("_")}
    assert public == {name for name in assay.__all__ if not name.startswith("_")}
    for name in assay.__all__:
        assert getattr(assay, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = assay.nope  # type: ignore[attr-defined]


def test_public_names_are_the_pipeline_objects() -> None:
    from assay.formats.golden import GoldenSet
    from assay.judge import Judge, Panel, make_judge
    from assay.pipelines.bootstrap import BuildSettings, build_golden
    from assay.pipelines.evaluate import EvalSettings
    from assay.pipelines.evaluate.called import evaluate
    from assay.targets import TargetSettings, TargetSpec, run_target

    expected = {
        "BuildSettings": BuildSettings, "EvalSettings": EvalSettings, "GoldenSet": GoldenSet, "Judge": Judge,
        "build": build_golden, "evaluate": evaluate, "make_judge": make_judge, "run": run_target,
        "TargetSettings": TargetSettings, "TargetSpec": TargetSpec, "Panel": Panel,
    }  # fmt: skip
    assert {name: getattr(assay, name) for name in expected} == expected
    assert isinstance(assay.make_judge("offline"), assay.Judge)


def _python_blocks(text: str) -> list[str]:
    """The ```python blocks of the "Python API" section, each padded so a traceback names its README line."""
    start = text.index("\n## Python API")
    section = text[: text.index("\n## ", start + 1)]
    return [
        "\n" * section.count("\n", 0, match.start(1)) + match[1]
        for match in re.finditer(r"```python\n(.*?)```", section, flags=re.DOTALL)
        if match.start() > start
    ]


def test_readme_python_examples_run_on_the_demo_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(DEMO / "corpus", tmp_path / "corpus")
    shutil.copytree(DEMO / "runs", tmp_path / "runs")
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) == 5
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # the README's own examples
    lines = capsys.readouterr().out.splitlines()
    built = re.fullmatch(r"(\d+) questions, (\d+) labels", lines[0])
    assert built is not None and int(built[1]) > 0 and int(built[2]) > 0
    assert (tmp_path / "golden" / "qrels.jsonl").is_file()
    assert [line.split()[0] for line in lines[2:4]] == ["bm25", "hybrid"]
    assert all(0.0 <= float(line.split()[1]) <= 1.0 for line in lines[2:4])
    assert "grade=" in lines[4]
    assert lines[5].startswith("0 failed; [('keyword', ") and "('bm25', " in lines[5]
    assert (tmp_path / "runs" / "keyword.jsonl").is_file()
