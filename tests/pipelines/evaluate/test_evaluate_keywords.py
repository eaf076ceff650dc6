"""``assay.evaluate``'s typed settings: ``settings=`` an EvalSettings and its fields as keywords (typed for mypy by
``SettingsKeywords``, which must stay EvalSettings' fields), and a wrong keyword a TypeError that lists the right
ones, the closest first."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from evaluate_fixture import good_lines, save_golden, write_run

from assay import EvalSettings, evaluate
from assay.pipelines.evaluate.called import SettingsKeywords, settings_of

TAKES = ["settings", "judge", "run_dir", "targets", "label", "secrets", "repeats", "conversing", "progress",
         "human_labels", "annotations", "criterion_labels"]  # fmt: skip


def test_the_keywords_are_evalsettings_fields_with_their_types_in_their_order() -> None:
    types = typing.get_type_hints(EvalSettings)
    fields = [(field.name, types[field.name]) for field in dataclasses.fields(EvalSettings)]
    assert list(typing.get_type_hints(SettingsKeywords).items()) == fields
    assert SettingsKeywords.__required_keys__ == frozenset()  # every keyword may be left out


def test_a_wrong_keyword_is_a_type_error_naming_the_keywords_closest_first(tmp_path: Path) -> None:
    with pytest.raises(TypeError) as caught:  # raised before the golden set (absent here) is read
        evaluate(tmp_path / "no-golden", ["run.jsonl"], n_bot=200)  # type: ignore[call-arg]
    message = str(caught.value)
    head = (
        "evaluate() got an unexpected keyword argument 'n_bot' (did you mean 'n_boot'?); its keywords, closest first:"
    )
    assert message.startswith(head)
    listed = message.removeprefix(head).strip().split(", ")
    fields = [field.name for field in dataclasses.fields(EvalSettings)]
    assert listed[0] == "n_boot" and sorted(listed) == sorted(fields + TAKES)


def test_a_keyword_like_no_setting_lists_them_all_without_a_guess() -> None:
    with pytest.raises(TypeError) as caught:
        settings_of(None, {"zzz": 1}, caller="assay_eval", takes=("judge",))
    message = str(caught.value)
    assert message.startswith("assay_eval() got an unexpected keyword argument 'zzz'; its keywords, closest first: ")
    assert "did you mean" not in message and "judge" in message and "k_values" in message


def test_keywords_replace_the_fields_of_settings_and_leave_the_others() -> None:
    base = EvalSettings(n_boot=300, k_values=(1, 3), seed=7)
    assert settings_of(base, {"k_values": (5,), "baseline": "bm25"}, caller="evaluate") == EvalSettings(
        n_boot=300, k_values=(5,), seed=7, baseline="bm25"
    )
    assert settings_of(None, {}, caller="evaluate") == EvalSettings()
    assert settings_of(None, {"seed": 1}, caller="x", default=EvalSettings(add_labels=False)) == EvalSettings(
        seed=1, add_labels=False
    )


def test_evaluate_reads_the_keywords(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    settings = EvalSettings(n_boot=200, k_values=(1, 3), add_labels=False)
    result, _ = evaluate(golden, [good], settings=settings, k_values=(5,), metrics=("P@5",))
    assert result.k_values == [5] and list(result.runs[0].metrics) == ["P@5"]
    # each good line: the answer chunk (3) and the related chunk (1) among 5 ranked: P@5 = 2/5
    assert result.runs[0].metrics["P@5"].mean == pytest.approx(2 / 5)
