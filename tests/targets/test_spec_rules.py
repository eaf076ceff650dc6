"""A target spec's rules, each by hand: its kind, the references it names, what is recorded (display and identity:
never a secret's value, a URL's password masked), the flag pairs, and every refusal with its fix."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.targets.spec import TargetSpec, expand, parse_pairs, redact, references


def test_kinds_and_references() -> None:
    assert [TargetSpec(t).kind for t in ("python:m:f", "http://h/", "https://h/", "cmd:ls -l")] == [
        "python", "http", "http", "cmd"
    ]  # fmt: skip
    assert references("${A} ${B_2} ${A} $C ${3D}") == ["A", "B_2"]
    spec = TargetSpec("https://h/${URL_KEY}", body='{"k": "${BODY}", "u": "${URL_KEY}"}',
                      headers=(("X-One", "${HEAD}"), ("X-Two", "${BODY}")))  # fmt: skip
    assert spec.references() == ["URL_KEY", "BODY", "HEAD"]
    assert TargetSpec("cmd:app --key=${KEY}").references() == ["KEY"]


def test_expand_and_redact() -> None:
    assert expand("${A}-${B}-${A}", {"A": "1", "B": "2"}) == "1-2-1"
    with pytest.raises(ConfigError, match=r"^\$\{B\} is named in the target but has no value: export B=\.\.\. first$"):
        expand("${A}${B}", {"A": "1"})
    # the longer secret first, so a secret inside another is not put back in its middle; an empty one is skipped
    assert redact("key abcdef and abc", {"SHORT": "abc", "LONG": "abcdef", "EMPTY": ""}) == "key ${LONG} and ${SHORT}"


def test_what_is_recorded_keeps_names_and_masks_a_password() -> None:
    spec = TargetSpec("https://me:pw@h:8080/p?x=1", body='{"q": "{question}"}', mapping=(("answer", "/a"),),
                      headers=(("X-Key", "${KEY}"), ("Authorization", "Bearer ${TOKEN}")))  # fmt: skip
    assert spec.display() == "https://me:***@h:8080/p?x=1"
    assert spec.identity() == {"target": "https://me:***@h:8080/p?x=1", "body": '{"q": "{question}"}',
                               "map": [("answer", "/a")], "headers": ["authorization", "x-key"]}  # fmt: skip
    assert TargetSpec("https://me@h/").display() == "https://me@h/"  # no password: nothing to mask
    assert TargetSpec("https://me:p@ss@h/x").display() == "https://me:***@h/x"  # the host follows the last @
    assert TargetSpec("https://me:${PW}@h/").display() == "https://me:${PW}@h/"  # a reference is no secret
    assert TargetSpec("cmd:app user:pw@h").display() == "cmd:app user:pw@h"  # only a URL has userinfo
    assert TargetSpec("python:m:f").identity() == {"target": "python:m:f", "body": None, "map": [], "headers": []}


def test_parse_pairs_strips_and_names_the_flag() -> None:
    assert parse_pairs(["answer = /out ", "contexts=/a=b"], "--map", "=") == (("answer", "/out"), ("contexts", "/a=b"))
    assert parse_pairs(["Authorization: Bearer x"], "--header", ":") == (("Authorization", "Bearer x"),)
    assert parse_pairs([], "--map", "=") == ()
    with pytest.raises(ConfigError, match=r"^--map 'answer': write NAME=VALUE$"):
        parse_pairs(["answer"], "--map", "=")
    with pytest.raises(ConfigError, match=r"^--header ' : x': write NAME:VALUE$"):
        parse_pairs([" : x"], "--header", ":")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (TargetSpec("ftp://x"), "target 'ftp://x': write python:package.module:function, http(s)://HOST/PATH or "
                                "cmd:PROGRAM ARGS"),
        (TargetSpec("python:a:b:c"), "target 'python:a:b:c': write python:package.module:function"),
        (TargetSpec("cmd:   "), "target 'cmd:' names no command: write cmd:PROGRAM ARGS"),
        (TargetSpec("python:m:f", mapping=(("answer", "/a"),)), "--body, --map and --header are for http(s) targets, "
                                                                "not python: targets"),
        (TargetSpec("cmd:x", headers=(("A", "b"),)), "--body, --map and --header are for http(s) targets, not cmd: "
                                                     "targets"),
        (TargetSpec("http://h/", body='{"q": }'), "--body is not JSON (Expecting value at column 7): write e.g. "
                                                  "'{\"q\": \"{question}\"}'"),
        (TargetSpec("http://h/", mapping=(("answer", "/a"), ("score", "/s"))), "--map score=...: the fields are "
                                                                               "retrieved, contexts, answer, "
                                                                               "citations, usage, rewrite, steps, "
                                                                               "messages, e.g. answer=/output"),
        (TargetSpec("http://h/", mapping=(("answer", "out"),)), "--map answer=out: a JSON pointer starts with '/', "
                                                                "e.g. answer=/out"),
    ],
)  # fmt: skip
def test_every_refusal_names_the_fix(spec: TargetSpec, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        spec.check()
    assert str(caught.value) == message


def test_good_specs_pass_their_check() -> None:
    for spec in (
        TargetSpec("python:m:f"),
        TargetSpec("cmd:app"),
        TargetSpec("cmd:x"),  # a one-letter program
        TargetSpec("http://h/"),
        TargetSpec("https://h/", body='{"q": "{question}"}', mapping=(("answer", ""), ("rewrite", "/r"))),
    ):
        assert spec.check() is spec
