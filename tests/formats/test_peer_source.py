"""Reading a peer definitions file without running it: calls found by their callee's last name, in written order,
their arguments by name, and the literal values assay reads (following module-level names); everything else is one
error naming the file, the line and the fix."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from assay.errors import FormatError
from assay.formats.peer_source import Member, PeerSource, callee


def _source(tmp_path: Path, text: str) -> PeerSource:
    path = tmp_path / "metrics.py"
    path.write_text(text, encoding="utf-8")
    return PeerSource(path)


def _error(tmp_path: Path, caught: pytest.ExceptionInfo[FormatError], line: int | None) -> str:
    """The error's text after its ``file:line:`` prefix, checked."""
    where = f"{tmp_path / 'metrics.py'}:{line}: " if line is not None else f"{tmp_path / 'metrics.py'}: "
    text = str(caught.value)
    assert text.startswith(where), text
    return text[len(where) :]


def _arg(source: PeerSource, name: str = "value") -> ast.expr:
    """The ``name`` argument of the file's first ``M(...)`` call."""
    (node,) = list(source.calls(["M"]))[:1]
    return source.call(node, ()).args[name]


def test_a_file_that_is_not_utf8_or_not_python_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "metrics.py"
    path.write_bytes(b'm = GEval(name="caf\xe9")\n')
    with pytest.raises(FormatError) as caught:
        PeerSource(path)
    assert str(caught.value).startswith(f"{path}: not UTF-8 text (")
    assert str(caught.value).endswith("); fix: save it as UTF-8")
    with pytest.raises(FormatError) as caught:
        _source(tmp_path, "x = 1\nm = GEval(name=\n")
    assert _error(tmp_path, caught, 2).startswith("not valid Python (")
    assert str(caught.value).endswith("); fix: correct the syntax")


def test_calls_are_found_by_their_last_name_in_written_order(tmp_path: Path) -> None:
    source = _source(tmp_path, 'b = metrics.GEval(x=A(), y=GEval(name="in"))\na = GEval(name="second")\n'
                               "c = deepeval.metrics.DAGMetric()\nd = fns[0]()\n"
                               'e = [f(g(GEval(name="deep"))),\n    GEval(name="shallow")]\n')  # fmt: skip
    found = [(node.lineno, node.col_offset, callee(node)) for node in source.calls(["GEval", "DAGMetric"])]
    assert found == [(1, 4, "GEval"), (1, 27, "GEval"), (2, 4, "GEval"), (3, 4, "DAGMetric"), (5, 9, "GEval"),
                     (6, 4, "GEval")]  # fmt: skip
    assert [callee(node) for node in source.calls(["A"])] == ["A"]
    (subscripted,) = (n for n in ast.walk(source.tree) if isinstance(n, ast.Call) and n.lineno == 4)
    assert callee(subscripted) is None


def test_positional_arguments_are_named_from_the_signature_given(tmp_path: Path) -> None:
    source = _source(tmp_path, 'M("a", [1], third=3)\n')
    (node,) = source.calls(["M"])
    call = source.call(node, ("name", "params", "other"))
    assert (call.kind, call.line, call.node) == ("M", 1, node)
    assert {k: source.value(v, k) for k, v in call.args.items()} == {"name": "a", "params": [1], "third": 3}


@pytest.mark.parametrize(
    ("text", "positional", "problem"),
    [
        ('M("a", "b")\n', ("name",), "M is given positional arguments assay cannot name; fix: pass them by keyword "
         "(name=...)"),
        ('M("a", "b")\n', ("name", "kind", "more"), ""),
        ("M(*args)\n", ("name", "kind"), "M is given positional arguments assay cannot name; fix: pass them by "
         "keyword (name=..., kind=...)"),
        ('M("a")\n', (), "M is given positional arguments assay cannot name; fix: pass them by keyword (name=...)"),
        ("M(**options)\n", ("name",), "M is given **arguments, which assay cannot read unrun; fix: pass each argument "
         "by keyword"),
    ],
)  # fmt: skip
def test_arguments_it_cannot_name_are_refused(
    tmp_path: Path, text: str, positional: tuple[str, ...], problem: str
) -> None:
    source = _source(tmp_path, "\n" + text)
    (node,) = source.calls(["M"])
    if not problem:  # fewer positional arguments than names: read
        assert set(source.call(node, positional).args) == {"name", "kind"}
        return
    with pytest.raises(FormatError) as caught:
        source.call(node, positional)
    assert _error(tmp_path, caught, 2) == problem


def test_literal_values_are_read_with_names_followed(tmp_path: Path) -> None:
    source = _source(
        tmp_path,
        "inner: dict = {'k': -2.5, 'n': None, 't': True}\nouter = inner\nsteps = ('a', -3)\n"
        "M(value=[outer, steps, P.INPUT, Rubric(a=1), 'x', 4])\n",
    )
    found = source.value(_arg(source), "M value")
    assert found[:2] == [{"k": -2.5, "n": None, "t": True}, ["a", -3]]
    assert found[2] == Member("INPUT", 4)
    assert isinstance(found[3], ast.Call) and callee(found[3]) == "Rubric"
    assert found[4:] == ["x", 4]
    assert source.plain(_arg(source), "M value") == found  # a call or member inside a list is not checked by plain


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("M(value=-True)\n", 1, "M value is not a literal (UnaryOp '-True')"),
        ("M(value=-'a')\n", 1, "M value is not a literal (UnaryOp \"-'a'\")"),
        ("M(value=not x)\n", 1, "M value is not a literal (UnaryOp 'not x')"),
        ("M(value={**base})\n", 1, "M value is not a literal (Dict '{**base}')"),
        ("M(value=b'x')\n", 1, "M value is not a literal (Constant \"b'x'\")"),
        ("M(value=x)\n", 1, "M value is the name 'x', never bound at module level; fix: bind x once at module level, "
         "or write the value itself in the call (assay reads the file without running it)"),
        ("x = 1\nx = 2\nM(value=x)\n", 3, "M value is the name 'x', bound more than once"),
        ("a = b\nb = a\nM(value=a)\n", 2, "M value is the name 'a', bound more than once"),  # a loop
        ("x = f'{y}' + 'long' * 40 + 'tail'\nM(value=[x])\n", 1, "M value is not a literal (BinOp "),
        ("def f():\n    x = 1\nM(value=x)\n", 3, "M value is the name 'x', never bound at module level"),
        ("x += 1\nM(value=x)\n", 2, "M value is the name 'x', never bound at module level"),
        ("x: int\nM(value=x)\n", 2, "M value is the name 'x', never bound at module level"),
        ("M(value=-x)\n", 1, "M value is the name 'x', never bound at module level"),
        ("M(value={x: 1})\n", 1, "M value is the name 'x', never bound at module level"),
        ("M(value={'k': x})\n", 1, "M value is the name 'x', never bound at module level"),
        ("x.y = 1\nM(value=x)\n", 2, "M value is the name 'x', never bound at module level"),
    ],
)  # fmt: skip
def test_a_value_it_cannot_read_unrun_is_one_error_at_its_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    source = _source(tmp_path, text)
    with pytest.raises(FormatError) as caught:
        source.value(_arg(source), "M value")
    found = _error(tmp_path, caught, line)
    assert found.startswith(problem), found
    if "is not a literal" in problem:
        assert found.endswith("; fix: write the value itself in the call (assay reads the file without running it)")


def test_a_not_literal_value_is_quoted_up_to_sixty_characters(tmp_path: Path) -> None:
    source = _source(tmp_path, "M(value=" + "1 + " * 20 + "2)\n")
    with pytest.raises(FormatError) as caught:
        source.value(_arg(source), "M value")
    assert _error(tmp_path, caught, 1).startswith("M value is not a literal (BinOp " + repr("1 + " * 15) + ")")


def test_names_bound_in_a_tuple_or_annotated_are_read(tmp_path: Path) -> None:
    source = _source(tmp_path, "a = b = 'same'\nc: str = 'typed'\nM(value=[a, b, c])\n")
    assert source.value(_arg(source), "M value") == ["same", "same", "typed"]


@pytest.mark.parametrize(
    ("text", "line", "shown"),
    [
        ("M(value=P.INPUT)\n", 1, "'P.INPUT'"),
        ("r = Rubric(a=1)\n\nM(value=r)\n", 1, "'Rubric(a=1)'"),
        ("M(value=Rubric(a='" + "x" * 70 + "'))\n", 1, repr("Rubric(a='" + "x" * 50)),  # cut at 60 characters
    ],
)
def test_plain_refuses_a_call_or_a_member_at_the_line_it_is_written(
    tmp_path: Path, text: str, line: int, shown: str
) -> None:
    source = _source(tmp_path, text)
    with pytest.raises(FormatError) as caught:
        source.plain(_arg(source), "M value")
    assert _error(tmp_path, caught, line) == (
        f"M value is not a literal ({shown}); fix: write the value itself in the call (assay reads the file without "
        "running it)"
    )
