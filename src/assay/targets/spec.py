"""A target: how to reach the system under test, written so that it can be recorded without its secrets.

``python:package.module:function``, ``http://...`` / ``https://...`` (with a JSON ``body`` template, JSON pointers in
``mapping`` and ``headers``) or ``cmd:program args...``. A secret is never written in a spec: the spec names an
environment variable as ``${NAME}`` (in the URL, a header value, the body or a command argument) and the caller
hands its value in ``secrets`` (the CLI reads exactly the variables named; the library never reads the
environment). What is recorded (:meth:`TargetSpec.display`, :meth:`TargetSpec.identity`) keeps ``${NAME}``, never
the value; a password written into a URL (``https://user:pw@host``) is masked as well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assay.errors import ConfigError

__all__ = ["BODY_DEFAULT", "MAP_FIELDS", "TargetSpec", "expand", "parse_pairs", "redact", "references"]

BODY_DEFAULT = '{"question": "{question}", "query_id": "{query_id}", "metadata": "{metadata}"}'
MAP_FIELDS = ("retrieved", "contexts", "answer", "citations", "usage", "rewrite", "steps", "messages")
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KINDS = ("python:", "http://", "https://", "cmd:")


def references(text: str) -> list[str]:
    """The environment variables a text names as ``${NAME}``, in order, each once."""
    return list(dict.fromkeys(_REFERENCE.findall(text)))


def expand(text: str, secrets: Mapping[str, str]) -> str:
    """``text`` with every ``${NAME}`` replaced by ``secrets[NAME]``; a name without a value raises ConfigError."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in secrets:
            raise ConfigError(f"${{{name}}} is named in the target but has no value: export {name}=... first")
        return secrets[name]

    return _REFERENCE.sub(value, text)


def redact(text: str, secrets: Mapping[str, str]) -> str:
    """``text`` with every secret value put back as ``${NAME}`` (for error messages that quote a URL or a reply)."""
    for name, secret in sorted(secrets.items(), key=lambda item: -len(item[1])):
        if secret:
            text = text.replace(secret, f"${{{name}}}")
    return text


@dataclass(frozen=True)
class TargetSpec:
    """How to call the system (module docstring); ``check`` says what is wrong with it, naming the fix."""

    text: str
    body: str | None = None
    mapping: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> str:
        """``python``, ``http`` or ``cmd``."""
        return "http" if self.text.startswith(("http://", "https://")) else self.text.partition(":")[0]

    def references(self) -> list[str]:
        """Every ``${NAME}`` the spec names (URL or command, body, header values)."""
        parts = [self.text, self.body or "", *(value for _, value in self.headers)]
        return list(dict.fromkeys(name for part in parts for name in references(part)))

    def display(self) -> str:
        """The spec as recorded in a run's header: ``${NAME}`` kept, a password in a URL masked."""
        return _mask_userinfo(self.text) if self.kind == "http" else self.text

    def identity(self) -> dict[str, Any]:
        """What decides the answers (for the cache key): the spec, body and map, header names (not their values)."""
        return {"target": self.display(), "body": self.body, "map": list(self.mapping),
                "headers": sorted(name.lower() for name, _ in self.headers)}  # fmt: skip

    def check(self) -> TargetSpec:
        """This spec, or ConfigError naming what is wrong and the fix."""
        if not self.text.startswith(_KINDS):
            raise ConfigError(
                f"target {self.text!r}: write python:package.module:function, http(s)://HOST/PATH or cmd:PROGRAM ARGS"
            )
        if self.kind != "http" and (self.body is not None or self.mapping or self.headers):
            raise ConfigError(f"--body, --map and --header are for http(s) targets, not {self.kind}: targets")
        if self.kind == "python" and self.text.count(":") != 2:
            raise ConfigError(f"target {self.text!r}: write python:package.module:function")
        if self.kind == "cmd" and not self.text[4:].strip():
            raise ConfigError("target 'cmd:' names no command: write cmd:PROGRAM ARGS")
        if self.kind == "http":
            self._check_http()
        return self

    def _check_http(self) -> None:
        try:
            json.loads(self.body or BODY_DEFAULT)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f'--body is not JSON ({exc.msg} at column {exc.colno}): write e.g. \'{{"q": "{{question}}"}}\''
            ) from None
        for name, _ in self.mapping:
            if name not in MAP_FIELDS:
                raise ConfigError(f"--map {name}=...: the fields are {', '.join(MAP_FIELDS)}, e.g. answer=/output")
        for name, pointer in self.mapping:
            if pointer and not pointer.startswith("/"):
                raise ConfigError(f"--map {name}={pointer}: a JSON pointer starts with '/', e.g. {name}=/{pointer}")


def parse_pairs(values: Sequence[str], flag: str, separator: str) -> tuple[tuple[str, str], ...]:
    """``NAME<separator>VALUE`` strings as pairs (``--map answer=/output``, ``--header 'Authorization: Bearer x'``)."""
    pairs = []
    for value in values:
        name, sep, rest = value.partition(separator)
        if not sep or not name.strip():
            raise ConfigError(f"{flag} {value!r}: write NAME{separator}VALUE")
        pairs.append((name.strip(), rest.strip()))
    return tuple(pairs)


def _mask_userinfo(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None or references(parts.password):
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))
