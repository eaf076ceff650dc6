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
* ``assay_eval(golden, runs, judge=..., settings=..., **fields)``: evaluate runs once per session and arguments.
  ``runs`` is a mapping name -> run or a list of runs and ``(name, run)`` pairs, named as :func:`assay.evaluate`
  names them (:mod:`assay.pipelines.evaluate.runs.given`): a run is a path (a list names it by its file stem), a
  list of dicts in the JSONL run format (passages by id, text or offsets), or the system itself: a Python function
  (sync or async, called as ``assay run`` calls a ``python:`` target, every golden question asked afresh once per
  session, ``repeats=N`` times each: the gate then runs on per-question means, with the system's own noise inside
  the intervals; ``conversing=`` an :class:`assay.targets.Conversing` says how it is asked the turns of a golden
  set's conversations, as :func:`assay.evaluate` does, ``Conversing(mode="both")`` adding the run ``NAME
  (rewrites)`` and the history gain) or an :class:`assay.TargetSpec`. The settings are ``settings=`` an
  :class:`~assay.pipelines.evaluate.EvalSettings` and any of its fields as a keyword (``k_values=(5, 10)``,
  ``n_boot=200``, ``baseline="v1"``: the name of the run every other run is compared with), typed for mypy
  (:class:`AssayEval`); any other keyword is a ``TypeError`` naming those that exist. Labels the judge adds stay
  in memory (the golden folder is not written). Returns an :class:`~assay.testing.evaluation.Evaluation`
  with ``assert_metric`` (the rule of ``assay eval --fail-under``, on the mean or an interval bound) and
  ``assert_not_worse`` (the paired test against a baseline run), both on the evaluation's own primary metric unless
  one is named (a measure counted in golden chunks is refused for a run whose passages are under half a chunk,
  naming the budget measure to use); a failure prints the metric, its interval, the worst queries and the judge's
  reasons.

Example::

    def test_release(assay_eval: AssayEval) -> None:
        runs = {"candidate": my_app.answer, "baseline": "runs/baseline.jsonl"}
        ev = assay_eval("golden/", runs, baseline="baseline", k_values=(5, 10))
        ev.assert_metric(at_least=0.6, run="candidate")       # the primary: interval's lower bound >= 0.6
        ev.assert_not_worse("candidate", baseline="baseline")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Unpack

import pytest

if TYPE_CHECKING:
    from assay.formats.golden import GoldenSet
    from assay.judge import Judge
    from assay.judge.panel import Grader
    from assay.pipelines.evaluate import EvalSettings
    from assay.pipelines.evaluate.called import SettingsKeywords
    from assay.pipelines.evaluate.runs.given import Runs
    from assay.targets import Conversing
    from assay.testing.evaluation import Evaluation

__all__ = ["AssayEval", "assay_eval", "assay_golden", "assay_judge", "pytest_addoption"]


class AssayEval(Protocol):
    """What the ``assay_eval`` fixture is: annotate a test's argument with it (``assay_eval: AssayEval``) and mypy
    checks the runs and every setting keyword."""

    def __call__(
        self,
        golden: str | Path,
        runs: Runs,
        /,
        *,
        judge: Grader | None = ...,
        settings: EvalSettings | None = ...,
        repeats: int = ...,
        conversing: Conversing | None = ...,
        **fields: Unpack[SettingsKeywords],
    ) -> Evaluation: ...


class _SessionJudge:
    """The default of ``judge=``: the session's judge (``assay_judge``), which None cannot mean (None: no judge)."""


_SESSION_JUDGE = _SessionJudge()
_TAKES = ("judge", "settings", "repeats", "conversing")  # assay_eval's keywords besides EvalSettings' fields
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


def _identity(source: object) -> str:
    """What a run is, for the session's cache of evaluations: a file by its resolved path, anything else by its id."""
    return str(source.resolve()) if isinstance(source, Path) else f"{type(source).__name__}@{id(source)}"


@pytest.fixture(scope="session")
def assay_eval(assay_judge: Judge | None, tmp_path_factory: pytest.TempPathFactory) -> AssayEval:
    """``assay_eval(golden, runs, judge=..., settings=..., **fields)``: an :class:`Evaluation`, computed once per
    arguments (module docstring)."""
    done: dict[tuple[Any, ...], Evaluation] = {}

    def evaluate(
        golden: str | Path,
        runs: Runs,
        /,
        *,
        judge: Grader | _SessionJudge | None = _SESSION_JUDGE,
        settings: EvalSettings | None = None,
        repeats: int = 1,
        conversing: Conversing | None = None,
        **fields: Unpack[SettingsKeywords],
    ) -> Evaluation:
        from assay.formats.golden import GoldenSet
        from assay.pipelines.evaluate import EvalSettings, evaluate_detailed
        from assay.pipelines.evaluate.called import materialize, settings_of
        from assay.pipelines.evaluate.runs.given import named_runs
        from assay.targets import Conversing
        from assay.testing.evaluation import Evaluation

        config = settings_of(settings, fields, caller="assay_eval", takes=_TAKES,
                             default=EvalSettings(add_labels=False))  # fmt: skip
        named = named_runs(runs)
        if not named:
            raise ValueError("assay_eval needs at least one run: assay_eval('golden/', {'candidate': my_app.answer})")
        chosen = assay_judge if isinstance(judge, _SessionJudge) else judge
        how = conversing or Conversing()
        key = (str(Path(golden).resolve()), tuple((run.name, _identity(run.source)) for run in named), id(chosen),
               repeats, how, repr(config))  # fmt: skip
        if key not in done:
            gold = GoldenSet.load(golden)
            folder = tmp_path_factory.mktemp("assay-runs")
            asked = materialize(gold, named, folder, repeats=repeats, conversing=how)
            result = evaluate_detailed(gold, asked, judge=chosen, settings=config)
            done[key] = Evaluation(result, gold, asked)
        return done[key]

    return evaluate
