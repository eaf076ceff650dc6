"""assay's pytest plugin: release gates on a golden set, with intervals and paired tests, inside ``pytest``.

Installed with assay (the ``pytest11`` entry point ``assay``), it adds three session fixtures and nothing else: no
hook runs unless a test asks for a fixture, and importing this module imports only pytest (assay's evaluator is
imported the first time a fixture is used).

* ``assay_judge``: the judge built from ``--assay-judge`` / ini ``assay_judge`` (``offline``, ``openai/...``, any
  litellm name; ``--assay-api-base`` / ``assay_api_base`` for an OpenAI-compatible server), with a persistent cache
  (``--assay-cache-dir`` / ``assay_cache_dir``, default assay's user cache, the CLI's), so a rerun pays for nothing
  judged before. None (no judge, trec_eval's convention) when no judge is named. The plugin reads no environment
  variable: for a key, override the fixture in ``conftest.py`` with ``assay.judge.make_judge(..., api_key=...)``.
* ``assay_golden(path)``: the golden set at ``path`` (loaded once per session).
* ``assay_eval(golden, *runs, judge=..., **settings)``: evaluate runs (paths, ``NAME=PATH`` strings, ``(name,
  path)`` pairs, or ``(name, rows)`` with rows a list of dicts in the JSONL run format, passages by id, text or
  offsets) once per session and arguments; ``settings`` are :class:`~assay.pipelines.evaluate.EvalSettings`
  fields (``k_values``, ``metrics``, ``n_boot``, ...). Labels the judge adds stay in memory (the golden folder is
  not written). Returns an :class:`~assay.testing.evaluation.Evaluation` with ``assert_metric`` (the rule of ``assay
  eval --fail-under``, on the mean or an interval bound) and ``assert_not_worse`` (the paired test against a
  baseline run); a failure prints the metric, its interval, the worst queries and the judge's reasons.

Example::

    def test_release(assay_eval):
        ev = assay_eval("golden/", "runs/baseline.jsonl", "runs/candidate.jsonl", k_values=(5, 10))
        ev.assert_metric("ndcg@10", at_least=0.6, run="candidate")       # interval's lower bound >= 0.6
        ev.assert_not_worse("candidate", baseline="baseline", metric="ndcg@10")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from assay.formats.golden import GoldenSet
    from assay.judge import Judge
    from assay.testing.evaluation import Evaluation

__all__ = ["assay_eval", "assay_golden", "assay_judge", "pytest_addoption"]

RunSpec = str | Path | tuple[str, str | Path] | tuple[str, list[dict[str, Any]]]
_DEFAULT = object()
_SETTINGS = {
    "judge": "judge for assay_eval: offline, openai/MODEL, any litellm name (default: none, no LLM metrics)",
    "api_base": "OpenAI-compatible server for the judge, e.g. http://127.0.0.1:8080/v1",
    "cache_dir": "judge cache folder (default: assay's user cache, shared with the assay CLI)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--assay-judge``, ``--assay-api-base``, ``--assay-cache-dir`` and the same names as ini keys."""
    group = parser.getgroup("assay", "assay release gates")
    for name, text in _SETTINGS.items():
        group.addoption(f"--assay-{name.replace('_', '-')}", dest=f"assay_{name}", default=None, help=text)
        parser.addini(f"assay_{name}", text, default=None)


def _setting(config: pytest.Config, name: str) -> str | None:
    value = config.getoption(f"assay_{name}") or config.getini(f"assay_{name}")
    return str(value) if value else None


def _cache_dir(config: pytest.Config) -> Path:
    chosen = _setting(config, "cache_dir")
    if chosen:
        return Path(chosen)
    import platformdirs

    return Path(platformdirs.user_cache_dir("assay")) / "judge"


@pytest.fixture(scope="session")
def assay_judge(pytestconfig: pytest.Config) -> Judge | None:
    """The judge named by ``--assay-judge`` / ini ``assay_judge`` with a persistent cache; None when none is named."""
    spec = _setting(pytestconfig, "judge")
    if spec is None:
        return None
    from assay.judge import make_judge

    cache = None if spec == "offline" else _cache_dir(pytestconfig)  # the offline judge is free: no cache
    return make_judge(spec, api_base=_setting(pytestconfig, "api_base"), cache_dir=cache)


@pytest.fixture(scope="session")
def assay_golden() -> Callable[[str | Path], GoldenSet]:
    """``assay_golden(path)``: the golden set in ``path``, loaded once per session."""
    loaded: dict[Path, GoldenSet] = {}

    def load(path: str | Path) -> GoldenSet:
        from assay.formats.golden import GoldenSet

        key = Path(path).resolve()
        if key not in loaded:
            loaded[key] = GoldenSet.load(key)
        return loaded[key]

    return load


def _run(spec: RunSpec) -> tuple[str, Path | list[dict[str, Any]]]:
    if isinstance(spec, tuple):
        return spec[0], spec[1] if isinstance(spec[1], list) else Path(spec[1])
    name, sep, path = str(spec).partition("=")
    if sep and name and not Path(spec).exists():
        return name, Path(path)
    return Path(spec).stem, Path(spec)


def _source_key(source: Path | list[dict[str, Any]]) -> str:
    """A run's part of the cache key: its resolved path, or the identity of an in-memory list."""
    return f"memory:{id(source)}" if isinstance(source, list) else str(source.resolve())


@pytest.fixture(scope="session")
def assay_eval(assay_judge: Judge | None) -> Callable[..., Evaluation]:
    """``assay_eval(golden, *runs, judge=..., **settings)``: an :class:`Evaluation`, computed once per arguments."""
    done: dict[tuple[Any, ...], Evaluation] = {}

    def evaluate(golden: str | Path, *runs: RunSpec, judge: Any = _DEFAULT, **settings: Any) -> Evaluation:
        from assay.formats.golden import GoldenSet
        from assay.pipelines.evaluate import EvalSettings, evaluate_detailed
        from assay.testing.evaluation import Evaluation

        if not runs:
            raise ValueError("assay_eval needs at least one run: assay_eval('golden/', 'runs/mine.jsonl')")
        chosen = assay_judge if judge is _DEFAULT else judge
        parsed = [_run(spec) for spec in runs]
        key = (str(Path(golden).resolve()), tuple((n, _source_key(p)) for n, p in parsed), id(chosen),
               tuple(sorted((k, repr(v)) for k, v in settings.items())))  # fmt: skip
        if key not in done:
            gold = GoldenSet.load(golden)
            config = EvalSettings(**{"add_labels": False, **settings})
            result = evaluate_detailed(gold, parsed, judge=chosen, settings=config)
            done[key] = Evaluation(result, gold, parsed)
        return done[key]

    return evaluate
