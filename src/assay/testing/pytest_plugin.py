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
* ``assay_eval(golden, *runs, judge=..., **settings_and_named_runs)``: evaluate runs once per session and
  arguments. A run is a path, a ``NAME=PATH`` string, a ``(name, path)`` pair, a ``(name, rows)`` pair with rows a
  list of dicts in the JSONL run format (passages by id, text or offsets), or the system itself: a Python
  function (``candidate=my_app.answer``; sync or async, called as ``assay run`` calls a ``python:`` target, every
  golden question asked afresh once per session, ``repeats=N`` times each: the gate then runs on per-question means,
  with the system's own noise inside the intervals; ``conversing=`` an :class:`assay.targets.Conversing` says how
  it is asked the turns of a golden set's conversations, as :func:`assay.evaluate` does, ``Conversing(mode="both")``
  adding the run ``NAME (rewrites)`` and the history gain) or, by keyword, an :class:`assay.TargetSpec`. A keyword
  that is an :class:`~assay.pipelines.evaluate.EvalSettings` field (``k_values``, ``metrics``, ``n_boot``, ...) is
  a setting; any other keyword names a run. ``baseline=`` a run file or a function is the run named ``baseline``
  that every other run is compared with (``baseline=`` the name of another run is the setting). Labels the judge
  adds stay in memory (the golden folder is not written). Returns an :class:`~assay.testing.evaluation.Evaluation`
  with ``assert_metric`` (the rule of ``assay eval --fail-under``, on the mean or an interval bound) and
  ``assert_not_worse`` (the paired test against a baseline run), both on the evaluation's own primary metric unless
  one is named (a measure counted in golden chunks is refused for a run whose passages are under half a chunk,
  naming the budget measure to use); a failure prints the metric, its interval, the worst queries and the judge's
  reasons.

Example::

    def test_release(assay_eval):
        ev = assay_eval("golden/", candidate=my_app.answer, baseline="runs/baseline.jsonl", k_values=(5, 10))
        ev.assert_metric(at_least=0.6, run="candidate")       # the primary: interval's lower bound >= 0.6
        ev.assert_not_worse("candidate", baseline="baseline")
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

RunSpec = str | Path | tuple[str, str | Path] | tuple[str, list[dict[str, Any]]] | Callable[..., Any]
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


def _run(spec: RunSpec) -> tuple[str, Any]:
    if callable(spec) and not isinstance(spec, (str, Path, tuple)):
        return str(getattr(spec, "__name__", type(spec).__name__)), spec
    if isinstance(spec, tuple):
        return spec[0], spec[1] if isinstance(spec[1], list) else Path(spec[1])
    name, sep, path = str(spec).partition("=")
    if sep and name and not Path(spec).exists():
        return name, Path(path)
    return Path(spec).stem, Path(spec)


def _sources(folder: Path, name: str, source: Any, asked: list[str]) -> list[tuple[str, Any]]:
    """Where a run's lines are read back from: the run files a function was asked into (``asked``: their names), a
    list as it is, a path."""
    if isinstance(source, list):
        return [(name, source)]
    return [(one, folder / f"{one}.jsonl") for one in asked] if callable(source) else [(name, Path(source))]


def _identity(source: Any) -> str:
    return str(Path(source).resolve()) if isinstance(source, (str, Path)) else f"{type(source).__name__}@{id(source)}"


def _split(settings: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """Keywords that are EvalSettings fields, and the other keywords as named runs."""
    import dataclasses

    from assay.pipelines.evaluate import EvalSettings

    names = {f.name for f in dataclasses.fields(EvalSettings)}
    named = [(k, v) for k, v in settings.items() if k not in names]
    base = settings.get("baseline")
    if base is not None and (callable(base) or isinstance(base, Path) or Path(str(base)).is_file()):
        named.append(("baseline", base))  # a run named baseline, every other run compared with it
        settings = {**settings, "baseline": "baseline"}
    runs = [(k, Path(v) if isinstance(v, str) else v) for k, v in named]
    return {k: v for k, v in settings.items() if k in names}, runs


@pytest.fixture(scope="session")
def assay_eval(assay_judge: Judge | None, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Evaluation]:
    """``assay_eval(golden, *runs, judge=..., **settings_and_named_runs)``: an :class:`Evaluation`, computed once
    per arguments (module docstring)."""
    done: dict[tuple[Any, ...], Evaluation] = {}

    def evaluate(
        golden: str | Path,
        *runs: RunSpec,
        judge: Any = _DEFAULT,
        repeats: int = 1,
        conversing: Any = None,
        **settings: Any,
    ) -> Evaluation:
        from assay.formats.golden import GoldenSet
        from assay.pipelines.evaluate import EvalSettings
        from assay.pipelines.evaluate.called import evaluate_systems
        from assay.targets import Conversing
        from assay.targets.conversations import ways
        from assay.testing.evaluation import Evaluation

        config_kwargs, named = _split(settings)
        parsed = [_run(spec) for spec in runs] + named
        if not parsed:
            raise ValueError("assay_eval needs at least one run: assay_eval('golden/', candidate=my_app.answer)")
        chosen = assay_judge if judge is _DEFAULT else judge
        how = conversing or Conversing()
        key = (str(Path(golden).resolve()), tuple((n, _identity(p)) for n, p in parsed), id(chosen), repeats, how,
               tuple(sorted((k, repr(v)) for k, v in config_kwargs.items())))  # fmt: skip
        if key not in done:
            gold = GoldenSet.load(golden)
            config = EvalSettings(**{"add_labels": False, **config_kwargs})
            folder = tmp_path_factory.mktemp("assay-runs")
            result = evaluate_systems(gold, parsed, run_dir=folder, judge=chosen, settings=config, repeats=repeats,
                                      conversing=how)  # fmt: skip
            sources = [one for name, p in parsed
                       for one in _sources(folder, name, p, [n for n, _ in ways(name, how, gold)])]  # fmt: skip
            done[key] = Evaluation(result, gold, sources)
        return done[key]

    return evaluate
