"""A user's Python file of peer metric definitions, read without running it: its calls and their literal arguments.

The file is parsed with :mod:`ast` and never executed or imported. A call is found by its callee's last name
(``GEval``, ``deepeval.metrics.GEval`` and ``metrics.GEval`` are all ``GEval``). An argument is read only when it is
a literal (a string, a number, a bool, None, or a list, tuple or dict of them), another call (a node of a DeepEval
graph, a ``Rubric``), an attribute such as ``LLMTestCaseParams.INPUT`` (read as its last name), or a name bound once
at module level to one of these (``rubrics = {...}`` then ``RubricsScore(rubrics=rubrics)``). Anything else (an
f-string, a function call's result, a name bound twice or never) is one :class:`~assay.errors.FormatError` naming
the file, the line and the fix.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import FormatError

__all__ = ["Member", "PeerCall", "PeerSource", "callee"]

_LITERAL_FIX = "write the value itself in the call (assay reads the file without running it)"


@dataclass(frozen=True)
class Member:
    """An attribute written as a value, e.g. ``LLMTestCaseParams.INPUT``: its last name and its line."""

    name: str
    line: int


@dataclass(frozen=True)
class PeerCall:
    """One call of the file: the callee's last name, its line, and its arguments by name (positional arguments named
    from the signature the reader gave)."""

    kind: str
    line: int
    args: dict[str, ast.expr]
    node: ast.Call


class PeerSource:
    """The parsed file and the readers of its values; every error names ``path`` and a line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(path, None, f"not UTF-8 text ({exc}); fix: save it as UTF-8") from None
        try:
            self.tree = ast.parse(text, filename=str(path))
        except SyntaxError as exc:
            raise FormatError(path, exc.lineno, f"not valid Python ({exc.msg}); fix: correct the syntax") from None
        self.bound = self._module_names()

    def fail(self, line: int | None, problem: str, fix: str) -> FormatError:
        """One error at ``line`` of the file."""
        return FormatError(self.path, line, f"{problem}; fix: {fix}")

    def _module_names(self) -> dict[str, list[ast.expr]]:
        """Each module-level name and the values bound to it (more than one: the name is ambiguous)."""
        bound: dict[str, list[ast.expr]] = {}
        for statement in self.tree.body:
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(value)
        return bound

    def calls(self, kinds: Sequence[str]) -> Iterator[ast.Call]:
        """The calls of the file whose callee's last name is one of ``kinds``, in the order they are written."""
        found = [node for node in ast.walk(self.tree) if isinstance(node, ast.Call) and callee(node) in kinds]
        yield from sorted(found, key=lambda node: (node.lineno, node.col_offset))

    def call(self, node: ast.Call, positional: Sequence[str]) -> PeerCall:
        """``node`` with its arguments by name; ``positional`` names its leading parameters in order."""
        kind = callee(node) or "?"
        if len(node.args) > len(positional) or any(isinstance(arg, ast.Starred) for arg in node.args):
            keywords = ", ".join(f"{p}=..." for p in positional) or "name=..."
            raise self.fail(node.lineno, f"{kind} is given positional arguments assay cannot name",
                            f"pass them by keyword ({keywords})")  # fmt: skip
        args = dict(zip(positional, node.args, strict=False))
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.fail(node.lineno, f"{kind} is given **arguments, which assay cannot read unrun",
                                "pass each argument by keyword")  # fmt: skip
            args[keyword.arg] = keyword.value
        return PeerCall(kind, node.lineno, args, node)

    def resolve(self, expr: ast.expr, what: str, seen: tuple[str, ...] = ()) -> ast.expr:
        """``expr``, or the one module-level value its name is bound to (followed through further names)."""
        if not isinstance(expr, ast.Name):
            return expr
        values = self.bound.get(expr.id, [])
        if len(values) != 1 or expr.id in seen:
            how = "never bound at module level" if not values else "bound more than once"
            raise self.fail(expr.lineno, f"{what} is the name {expr.id!r}, {how}",
                            f"bind {expr.id} once at module level, or {_LITERAL_FIX}")  # fmt: skip
        return self.resolve(values[0], what, (*seen, expr.id))

    def value(self, expr: ast.expr, what: str) -> Any:
        """The literal value of ``expr``: str, int, float, bool, None, list (for a list or tuple), dict, a
        :class:`Member` for an attribute, or the :class:`ast.Call` itself for a call."""
        expr = self.resolve(expr, what)
        if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, int, float, bool, type(None))):
            return expr.value
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            number = self.value(expr.operand, what)
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                return -number
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [self.value(item, what) for item in expr.elts]
        if isinstance(expr, ast.Dict) and None not in expr.keys:
            return {self.value(k, what): self.value(v, what) for k, v in zip(expr.keys, expr.values, strict=True)
                    if k is not None}  # fmt: skip
        if isinstance(expr, ast.Attribute):
            return Member(expr.attr, expr.lineno)
        if isinstance(expr, ast.Call):
            return expr
        raise self.fail(expr.lineno, f"{what} is not a literal ({type(expr).__name__} {ast.unparse(expr)[:60]!r})",
                        _LITERAL_FIX)  # fmt: skip

    def plain(self, expr: ast.expr, what: str) -> Any:
        """:meth:`value` where a call or an attribute cannot stand (a text, a number, a dict of texts)."""
        found = self.value(expr, what)
        if isinstance(found, (ast.Call, Member)):
            written = self.resolve(expr, what)
            raise self.fail(written.lineno, f"{what} is not a literal ({ast.unparse(written)[:60]!r})", _LITERAL_FIX)
        return found


def callee(node: ast.Call) -> str | None:
    """The last name of a call's callee: ``GEval`` for ``GEval(...)`` and ``deepeval.metrics.GEval(...)``."""
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None
