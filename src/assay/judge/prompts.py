"""Prompt files: load them by name, render them into chat messages.

A prompt is one file ``<name>.md``: TOML front matter between two lines that are exactly ``+++``, then a body of
sections started by lines that are exactly ``[system]`` and ``[user]``, each a jinja2 template::

    +++
    name = "relevance"
    version = "1"
    description = "..."
    inputs = ["question", "passage"]
    output = "RelevanceGrade"          # a key of assay.judge.outputs.OUTPUT_MODELS, or "package.module:Class"
    [params]
    temperature = 0.0
    +++
    [system]
    ...
    [user]
    <passage-{{ nonce }}>{{ passage | data }}</passage-{{ nonce }}>

Templates render with autoescape off and strict undefined variables; the ``data`` filter XML-escapes ``&``, ``<``
and ``>`` so a passage cannot close its delimiter tag, and ``enumerate`` is available. ``nonce`` is supplied by the
renderer, never by the caller (it is not an input): a code of 12 hex digits for delimiter tags, the keyed blake2b
digest of the call's variables (canonical JSON) under the prompt file's hash (:func:`data_nonce`). The author of a
passage cannot write its closing tag, since the code is a digest of the passage itself, and the same call renders the
same messages, so the cache still answers a rerun. The packaged prompts live in ``assay/_prompts`` (the top-level
``prompts/`` folder); a user directory overrides them name by name.
"""

from __future__ import annotations

import hashlib
import importlib
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import jinja2.runtime
from pydantic import BaseModel

from assay.errors import PromptError
from assay.judge.json_schema import strict_schema
from assay.text import canonical_json, content_hash

__all__ = [
    "NONCE",
    "Prompt",
    "data_nonce",
    "escape_data",
    "list_prompts",
    "load_prompt",
    "packaged_prompt_dir",
    "parse_prompt",
]

_FENCE = "+++"
_SECTIONS = {"[system]": "system", "[user]": "user"}
_REQUIRED_KEYS = ("name", "version", "inputs", "output")
NONCE = "nonce"
_NONCE_BYTES = 6


def escape_data(value: Any) -> str:
    """XML-escape ``&``, ``<`` and ``>`` so text placed inside a delimiter tag cannot close or open one."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def data_nonce(variables: Mapping[str, Any], prompt_hash: str) -> str:
    """The delimiter code of one call: blake2b of the canonical JSON of ``variables``, keyed by ``prompt_hash``.

    Deterministic (the same call gives the same code, so the rendered messages and the cache key are stable) and out
    of reach of the author of a variable: the code changes with the text that would have to contain it, so a passage
    that carries its own closing tag takes a search of about 2**48 digests, with every other variable of the call
    (the question, the other passages) known beforehand; the XML escaping stops a forged tag in any case.
    """
    data = canonical_json(dict(variables)).encode("utf-8")
    return hashlib.blake2b(data, key=prompt_hash.encode("ascii"), digest_size=_NONCE_BYTES).hexdigest()


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=False)  # noqa: S701
    env.filters["data"] = escape_data
    env.globals["enumerate"] = enumerate
    return env


_ENV = _environment()


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt: metadata, the output model, and compiled templates.

    ``content_hash`` is the blake2b digest of the file's bytes; ``ref`` is ``name@version``; ``schema`` is the output
    model's JSON schema in the strict subset structured-output servers accept; ``uses_nonce`` says whether a template
    writes ``{{ nonce }}`` (a prompt that does not pays nothing for it).
    """

    name: str
    version: str
    description: str
    inputs: tuple[str, ...]
    output_model: type[BaseModel]
    params: Mapping[str, Any]
    content_hash: str
    path: Path
    schema: Mapping[str, Any]
    templates: Mapping[str, jinja2.Template] = field(repr=False)
    static: Mapping[str, str] = field(default_factory=dict, repr=False)
    uses_nonce: bool = False

    @property
    def ref(self) -> str:
        """``name@version``, the form that goes on every label."""
        return f"{self.name}@{self.version}"

    def check(self, names: Collection[str]) -> None:
        """Raise :class:`PromptError` when ``names`` (the variables given) lack an input or have an unknown one."""
        missing = [name for name in self.inputs if name not in names]
        if missing:
            raise PromptError(
                f"prompt {self.ref} ({self.path}): missing variable {', '.join(missing)}; give every input "
                f"of {list(self.inputs)}"
            )
        unknown = sorted(set(names) - set(self.inputs))
        if unknown:
            raise PromptError(
                f"prompt {self.ref} ({self.path}): unknown variable {', '.join(unknown)}; it takes only "
                f"{list(self.inputs)}"
            )

    def render(self, variables: Mapping[str, Any]) -> list[dict[str, str]]:
        """Chat messages (system first, then user) for ``variables``; a missing or unknown variable is an error."""
        self.check(variables)
        messages = []
        context = {**_ENV.globals, **variables}
        if self.uses_nonce:
            context[NONCE] = data_nonce(variables, self.content_hash)
        for role, template in self.templates.items():
            content = self.static.get(role)
            if content is None:
                content = _render(template, context, self)
            messages.append({"role": role, "content": content})
        return messages


def _render(template: jinja2.Template, context: dict[str, Any], prompt: Prompt) -> str:
    # A shared context with the globals merged in by the caller: Template.render copies jinja's globals chain on
    # every call, which costs more than rendering a short template.
    try:
        ctx = jinja2.runtime.new_context(template.environment, template.name, template.blocks, context, shared=True)
        return template.environment.concat(template.root_render_func(ctx)).strip()
    except jinja2.UndefinedError as exc:
        raise PromptError(f"prompt {prompt.ref} ({prompt.path}): {exc}; declare it in inputs and pass it") from exc


def prompt_names(user_dir: Path | None = None) -> list[str]:
    """The names of the bundled prompts, and of those in ``user_dir`` (``NAME.md``), sorted."""
    dirs = [packaged_prompt_dir(), *([user_dir] if user_dir is not None else [])]
    return sorted({path.stem for folder in dirs if folder.is_dir() for path in folder.glob("*.md")})


def packaged_prompt_dir() -> Path:
    """The folder of the prompts shipped with assay."""
    return Path(str(files("assay") / "_prompts"))


def _variables(source: str) -> set[str]:
    return jinja2.meta.find_undeclared_variables(_ENV.parse(source)) - set(_ENV.globals)


def _find(name: str, user_dir: Path | None) -> Path:
    for folder in (user_dir, packaged_prompt_dir()):
        if folder is not None and (folder / f"{name}.md").is_file():
            return folder / f"{name}.md"
    known = ", ".join(list_prompts(user_dir)) or "none"
    raise PromptError(f"no prompt named {name!r} (known: {known}); add {name}.md to the prompt directory")


def list_prompts(user_dir: Path | None = None) -> list[str]:
    """The names of all prompts, packaged and from ``user_dir``, sorted."""
    names: set[str] = set()
    for folder in (user_dir, packaged_prompt_dir()):
        if folder is not None and folder.is_dir():
            names.update(path.stem for path in folder.glob("*.md"))
    return sorted(names)


def load_prompt(name: str, user_dir: Path | None = None) -> Prompt:
    """Load the prompt ``name``, from ``user_dir`` when it has one by that name, else the packaged one."""
    path = _find(name, Path(user_dir) if user_dir is not None else None)
    data = path.read_bytes()
    # Parsing compiles the templates and builds the schema (a few ms); a file whose bytes are unchanged is parsed
    # once per process, however many judges load it.
    prompt = _PARSED.get((path, data))
    if prompt is None:
        prompt = parse_prompt(data, path)
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()
        _PARSED[(path, data)] = prompt
    return prompt


_PARSED: dict[tuple[Path, bytes], Prompt] = {}
_MAX_PARSED = 128


def _split(text: str, path: Path) -> tuple[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != _FENCE:
        raise PromptError(f"{path}:1: a prompt file starts with a line '+++' opening its TOML front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == _FENCE)
    except StopIteration:
        raise PromptError(f"{path}: the front matter is never closed; add a line '+++' after it") from None
    return "\n".join(lines[1:end]), "\n".join(lines[end + 1 :])


def _sections(body: str, path: Path) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in body.splitlines():
        if line.strip() in _SECTIONS:
            current = _SECTIONS[line.strip()]
            if current in sections:
                raise PromptError(f"{path}: section [{current}] appears twice; keep one")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif line.strip():
            raise PromptError(f"{path}: text before the first [system] or [user] line; start the body with one")
    if "user" not in sections:
        raise PromptError(f"{path}: no [user] section; add a line '[user]' followed by its template")
    order = [role for role in ("system", "user") if role in sections]
    return {role: "\n".join(sections[role]) for role in order}


def _output_model(spec: str, path: Path) -> type[BaseModel]:
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            model = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise PromptError(f"{path}: output model {spec!r} cannot be imported ({exc})") from exc
    else:
        from assay.judge.outputs import OUTPUT_MODELS

        if spec not in OUTPUT_MODELS:
            raise PromptError(f"{path}: unknown output model {spec!r}; use one of {sorted(OUTPUT_MODELS)}")
        model = OUTPUT_MODELS[spec]
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise PromptError(f"{path}: output {spec!r} is not a pydantic model class")
    return model


def _meta(front: str, path: Path) -> dict[str, Any]:
    try:
        meta = tomllib.loads(front)
    except tomllib.TOMLDecodeError as exc:
        raise PromptError(f"{path}: front matter is not valid TOML ({exc})") from exc
    missing = [key for key in _REQUIRED_KEYS if key not in meta]
    if missing:
        raise PromptError(f"{path}: front matter lacks {', '.join(missing)}; add them")
    if not isinstance(meta["inputs"], list) or not all(isinstance(x, str) for x in meta["inputs"]):
        raise PromptError(f'{path}: inputs must be a list of variable names, e.g. inputs = ["question"]')
    if NONCE in meta["inputs"]:
        raise PromptError(f"{path}: {NONCE!r} is supplied by the renderer (the delimiter code); remove it from inputs")
    if not isinstance(meta.get("params", {}), dict):
        raise PromptError(f"{path}: params must be a table, e.g. [params] temperature = 0.0")
    return meta


def parse_prompt(data: bytes, path: Path) -> Prompt:
    """Parse the bytes of a prompt file (``path`` is used in messages and kept on the prompt)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PromptError(f"{path}: not UTF-8 text ({exc}); save it as UTF-8") from exc
    front, body = _split(text, path)
    meta = _meta(front, path)
    try:
        sources = _sections(body, path)
        templates = {role: _ENV.from_string(src) for role, src in sources.items()}
        # A section that uses no variable renders once, here: the same string object on every call.
        used = {role: _variables(src) for role, src in sources.items()}
        static = {role: templates[role].render().strip() for role in sources if not used[role]}
    except jinja2.TemplateSyntaxError as exc:
        raise PromptError(f"{path}: template error in the body, line {exc.lineno}: {exc.message}") from exc
    model = _output_model(str(meta["output"]), path)
    return Prompt(
        name=str(meta["name"]),
        version=str(meta["version"]),
        description=str(meta.get("description", "")),
        inputs=tuple(meta["inputs"]),
        output_model=model,
        params=dict(meta.get("params", {})),
        content_hash=content_hash(data),
        path=path,
        schema=strict_schema(model),
        templates=templates,
        static=static,
        uses_nonce=any(NONCE in names for names in used.values()),
    )
