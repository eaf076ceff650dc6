"""The three ways to call a system: a Python function, an HTTP endpoint, a command. One call = one question.

Each caller is an async context manager (opened once per run, on the run's event loop) and an async callable
``caller(ask) -> dict`` returning what the system said (:func:`assay.targets.outputs.normalize` makes a run line of
it) or raising :class:`~assay.targets.outputs.TargetFailure`. What is transient (worth trying again): HTTP 408, 429
(with its ``Retry-After``) and 5xx, connection errors and resets, malformed JSON, a Python ``ConnectionError`` or
``TimeoutError``; the runner adds timeouts. Anything else fails the question at once.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.aio import in_daemon_thread
from assay.errors import ConfigError
from assay.targets.outputs import TargetFailure, resolve_pointer
from assay.targets.spec import BODY_DEFAULT, TargetSpec, expand

__all__ = ["Ask", "Caller", "CmdCaller", "HttpCaller", "PythonCaller", "function_name", "make_caller"]

_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_KWARGS = ("query_id", "metadata")
TOP_K_NAMES = ("top_k", "k")  # the parameters a python target may take the number of passages by


@dataclass(frozen=True)
class Ask:
    """One question put to the system."""

    query_id: str
    question: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    repeat: int | None = None  # the asking, 0 to N - 1, when every question is asked N times (None: asked once)
    conversation_id: str | None = None  # a turn of a conversation (:mod:`assay.targets.conversations`): which one
    turn: int | None = None  # its index in the conversation, from 0
    messages: tuple[Mapping[str, str], ...] | None = None  # the history and this turn, OpenAI format (None: no history)
    top_k: int | None = None  # the passages asked for (assay run --top-k); None: the system's own number

    def as_json(self) -> dict[str, Any]:
        """What a command reads on stdin and an HTTP body fills in (``messages`` only for a turn asked with its
        history, ``top_k`` only when asked for); also the answers cache's key, so a turn asked after another
        history, or for another number of passages, is asked again."""
        out: dict[str, Any] = {"question": self.question, "query_id": self.query_id, "metadata": dict(self.metadata)}
        if self.messages is not None:
            out["messages"] = [dict(message) for message in self.messages]
        if self.top_k is not None:
            out["top_k"] = self.top_k
        return out


class Caller:
    """Base of the callers: an async context manager and ``await caller(ask)``."""

    async def __aenter__(self) -> Caller:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def __call__(self, ask: Ask) -> Any:
        raise NotImplementedError


def function_name(fn: Callable[..., Any]) -> str:
    """``python:module:qualname`` of a function (its target name and cache identity)."""
    return f"python:{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"


def load_function(text: str) -> Callable[..., Any]:
    """The function of ``python:package.module:function`` (``function`` may be ``Class.method``)."""
    _, module_name, attribute = text.split(":", 2)
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"target {text!r}: cannot import {module_name!r} ({exc}); run from the folder that holds "
                          "it or install it") from None  # fmt: skip
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ConfigError(f"target {text!r}: {module_name} has no {attribute!r}")
        value = getattr(value, part)
    if not callable(value):
        raise ConfigError(f"target {text!r}: {attribute} is not a function")
    return value  # type: ignore[no-any-return]


class PythonCaller(Caller):
    """A function ``fn(question, query_id=..., metadata=...)``, sync or async.

    The function gets the question text first, then whichever of ``query_id`` and ``metadata`` it declares (all
    of them with ``**kwargs``), ``repeat`` (which asking, with ``--repeats``; None otherwise) when it names it, and
    ``messages`` (a turn's history and the turn itself, OpenAI format; None for a single question) when it names it.
    With ``top_k`` (``assay run --top-k``) the function gets it as its ``top_k`` parameter, else its ``k`` (or
    ``top_k`` through ``**kwargs``); one that takes neither is refused at the start, naming the fix.
    A sync function runs in a daemon thread of its own per call
    (:func:`assay.aio.in_daemon_thread`; the runner's semaphore bounds how many at once); one that times out or is
    interrupted (Ctrl-C) keeps its thread until it returns (Python cannot stop a thread), its late answer is dropped,
    and it does not hold the process open at exit.
    """

    def __init__(self, fn: Callable[..., Any], top_k: int | None = None) -> None:
        self.fn = fn
        self._kwargs = _declared(fn)
        self._top_k = _top_k_name(fn) if top_k is not None else None

    async def __call__(self, ask: Ask) -> Any:
        kwargs = {name: getattr(ask, name) for name in self._kwargs}
        kwargs = {k: dict(v) if isinstance(v, Mapping) else v for k, v in kwargs.items()}
        if self._top_k is not None and ask.top_k is not None:
            kwargs[self._top_k] = ask.top_k
        if kwargs.get("messages") is not None:
            kwargs["messages"] = [dict(message) for message in kwargs["messages"]]
        try:
            if inspect.iscoroutinefunction(self.fn):
                return await self.fn(ask.question, **kwargs)
            result = await in_daemon_thread(lambda: self.fn(ask.question, **kwargs))
            return await result if inspect.isawaitable(result) else result
        except TargetFailure:
            raise
        except Exception as exc:
            transient = isinstance(exc, (ConnectionError, TimeoutError))
            raise TargetFailure("exception", f"{type(exc).__name__}: {exc}", transient=transient) from None


def _declared(fn: Callable[..., Any]) -> tuple[str, ...]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return ()
    if not params:
        raise ConfigError(f"{function_name(fn)} takes no argument: it must take the question text")
    # given only to a function that names them (assay run --repeats; a conversation's turns)
    named = tuple(name for name in ("repeat", "messages") if name in params)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return (*_KWARGS, *named)
    return (*(name for name in _KWARGS if name in params), *named)


def _top_k_name(fn: Callable[..., Any]) -> str:
    """The parameter ``fn`` takes the number of passages by (:data:`TOP_K_NAMES`, or ``top_k`` into ``**kwargs``);
    ConfigError naming the fix when it takes none."""
    try:
        params = dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = {}
    named = next((name for name in TOP_K_NAMES if name in params), None)
    if named is None and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        named = "top_k"
    if named is None:
        raise ConfigError(
            f"--top-k: {function_name(fn)} takes no top_k (or k) parameter, so it cannot be asked for more passages: "
            "add `top_k: int = 10` to it and retrieve that many, or drop --top-k"
        )
    return named


class HttpCaller(Caller):
    """POST the body template (``{question}``, ``{query_id}``, ``{metadata}``, ``{messages}``, ``{top_k}`` filled in)
    to the URL; read the JSON reply, through the ``mapping`` of JSON pointers when given. Without ``--body``, a turn
    asked with its history also sends ``"messages"`` (the default body plus the history), and ``--top-k`` sends
    ``"top_k"``; a ``--body`` given with ``--top-k`` must place ``"{top_k}"`` (else it is refused at the start)."""

    def __init__(
        self, spec: TargetSpec, secrets: Mapping[str, str], connections: int, top_k: int | None = None
    ) -> None:
        self.url = expand(spec.text, secrets)
        self.template = json.loads(expand(spec.body or BODY_DEFAULT, secrets))
        self.default_body = spec.body is None
        if top_k is not None and spec.body is not None and "{top_k}" not in spec.body:
            raise ConfigError(f"--top-k {top_k}: the --body has no {{top_k}}, so the system would not be asked for "
                              'more passages: add e.g. "top_k": "{top_k}" to it, or drop --top-k')  # fmt: skip
        self.headers = {name: expand(value, secrets) for name, value in spec.headers}
        self.mapping, self.connections = dict(spec.mapping), connections
        self._session: Any = None  # an aiohttp.ClientSession inside `async with`

    async def __aenter__(self) -> HttpCaller:
        import aiohttp  # here: `assay --help` and the other targets never need it

        connector = aiohttp.TCPConnector(limit=self.connections)
        timeout = aiohttp.ClientTimeout(total=None)  # the runner's --timeout bounds each call
        self._session = aiohttp.ClientSession(connector=connector, headers=self.headers, timeout=timeout,
                                              trust_env=False)  # fmt: skip
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    async def __call__(self, ask: Ask) -> Any:
        import aiohttp

        if self._session is None:
            raise RuntimeError("HttpCaller used outside 'async with'")
        try:
            body = fill(self.template, ask)
            if self.default_body and ask.messages is not None and isinstance(body, dict):
                body["messages"] = [dict(message) for message in ask.messages]
            if self.default_body and ask.top_k is not None and isinstance(body, dict):
                body["top_k"] = ask.top_k
            async with self._session.post(self.url, json=body) as response:
                text = await response.text(errors="replace")
                status, retry_after = response.status, response.headers.get("Retry-After")
        except aiohttp.ClientError as exc:
            raise TargetFailure("connection", f"{type(exc).__name__}: {exc}", transient=True) from None
        if status >= 300:
            raise TargetFailure("http_status", f"HTTP {status}: {text[:300]}", transient=status in _TRANSIENT_STATUS,
                                retry_after=_seconds(retry_after))  # fmt: skip
        return self._mapped(parse_json(text, "the response"))

    def _mapped(self, reply: Any) -> Any:
        if not self.mapping:
            return reply
        return {name: resolve_pointer(reply, pointer) for name, pointer in self.mapping.items()}


def fill(template: Any, ask: Ask) -> Any:
    """The body template with the question filled in: a string that is exactly ``"{metadata}"`` (or another
    placeholder) becomes that value (``"{messages}"``: the list of messages, ``[]`` for a single question);
    placeholders inside a longer string are replaced as text."""
    values = {"messages": [], "top_k": None, **ask.as_json()}
    if isinstance(template, dict):
        return {key: fill(value, ask) for key, value in template.items()}
    if isinstance(template, list):
        return [fill(value, ask) for value in template]
    if isinstance(template, str):
        for name, value in values.items():
            if template == "{" + name + "}":
                return value
        for name in ("question", "query_id"):
            template = template.replace("{" + name + "}", values[name])
    return template


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def parse_json(text: str, what: str) -> Any:
    """Parsed JSON, or a transient ``invalid_output`` failure quoting the start of ``text``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TargetFailure(
            "invalid_output", f"{what} is not JSON ({exc.msg} at column {exc.colno}): {text[:120]!r}", transient=True
        ) from None


class CmdCaller(Caller):
    """``cmd:PROGRAM ARGS``: one process per question, one JSON object on its stdin (question, query_id, metadata;
    ``messages`` for a turn asked with its history; ``top_k`` with ``--top-k``),
    one JSON object expected on its stdout, exit status 0. No shell runs it; ``${NAME}`` in an argument is expanded.
    A process still running when the call times out is killed."""

    def __init__(self, spec: TargetSpec, secrets: Mapping[str, str]) -> None:
        self.argv = [expand(arg, secrets) for arg in shlex.split(spec.text[4:])]
        if shutil.which(self.argv[0]) is None:
            raise ConfigError(f"target {spec.text!r}: program {self.argv[0]!r} not found on PATH")

    async def __call__(self, ask: Ask) -> Any:
        process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            out, err = await process.communicate((json.dumps(ask.as_json()) + "\n").encode("utf-8"))
        except BaseException:
            if process.returncode is None:
                process.kill()
                await process.wait()
            raise
        if process.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-300:]
            raise TargetFailure("exit_status", f"exit status {process.returncode}: {tail or '(no stderr)'}")
        return parse_json(out.decode("utf-8", "replace").strip(), "the command's stdout")


def make_caller(
    target: TargetSpec | Callable[..., Any],
    *,
    secrets: Mapping[str, str] | None = None,
    concurrency: int = 8,
    top_k: int | None = None,
) -> tuple[str, dict[str, Any], Caller]:
    """``(display name, identity, caller)`` of a spec or a Python callable; ``top_k``: the passages every question
    asks for (a target that cannot take it is refused here, before any question is asked)."""
    if top_k is not None and top_k < 1:
        raise ConfigError(f"--top-k {top_k}: ask for at least 1 passage")
    if callable(target) and not isinstance(target, TargetSpec):
        name = function_name(target)
        return name, {"target": name}, PythonCaller(target, top_k)
    spec, secrets = target.check(), dict(secrets or {})
    for name in spec.references():
        if name not in secrets:
            raise ConfigError(f"${{{name}}} is named in the target but has no value: export {name}=... first")
    if spec.kind == "python":
        return spec.display(), spec.identity(), PythonCaller(load_function(spec.text), top_k)
    if spec.kind == "http":
        return spec.display(), spec.identity(), HttpCaller(spec, secrets, concurrency, top_k)
    return spec.display(), spec.identity(), CmdCaller(spec, secrets)
