"""Tests never touch the user's folders: every default folder resolves into a temporary home, and a session that
changes the real ones fails naming the files.

The check is proved on inner pytest sessions run with this directory's ``conftest.py``, whose "real" home is a
temporary folder set in their environment before they start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import platformdirs

from assay.cli.cache import resolve_cache_dir
from assay.pipelines.judgecheck.lookup import card_home

CONFTEST = Path(__file__).resolve().parent / "conftest.py"
HOME_VARIABLES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")


def test_every_default_folder_is_under_this_tests_home(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    real = Path(os.environ["XDG_CACHE_HOME"]).parent
    assert home == real and home.name.startswith("home") and not tmp_path.is_relative_to(home)
    for folder in (platformdirs.user_cache_dir("assay"), Path("~").expanduser(), resolve_cache_dir(None),
                   card_home(resolve_cache_dir(None), "offline"), os.environ["ASSAY_LOCAL_MODEL_CACHE"]):  # fmt: skip
        assert Path(folder).is_relative_to(home), folder


def _inner_session(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """A pytest session over one test file ``body``, with this conftest, whose real home is ``tmp_path/real``."""
    inner = tmp_path / "inner"
    inner.mkdir()
    shutil.copy(CONFTEST, inner / "conftest.py")
    (inner / "test_inner.py").write_text(body)
    real = tmp_path / "real"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_") and k not in HOME_VARIABLES}
    env |= {"HOME": str(real), "XDG_CACHE_HOME": str(real / ".cache"), "XDG_CONFIG_HOME": str(real / ".config"),
            "XDG_DATA_HOME": str(real / ".local" / "share")}  # fmt: skip
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(inner)]
    return subprocess.run(command, cwd=inner, env=env, capture_output=True, text=True, check=False, timeout=120)


CLEAN = """
from pathlib import Path

import platformdirs

def test_writes_where_the_defaults_point():
    cards = Path(platformdirs.user_cache_dir("assay")) / "judge" / "cards" / "offline"
    cards.mkdir(parents=True)
    (cards / "card.json").write_text("{{}}")
    (Path("~").expanduser() / "notes.txt").write_text("x")

def test_the_local_model_cache_is_the_real_tools_own():
    tool = Path({tool!r})
    tool.mkdir(parents=True)
    (tool / "llama-server").write_text("built")
"""

DIRTY = """
from pathlib import Path

def test_writes_the_real_cache():
    cards = Path({cache!r}) / "judge" / "cards" / "offline"
    cards.mkdir(parents=True)
    (cards / "card.json").write_text("{{}}")

def test_changes_a_real_file():
    with open({kept!r}, "a") as kept:
        kept.write("one more answer")
"""


def test_a_session_writing_only_where_the_defaults_point_passes(tmp_path: Path) -> None:
    cache = tmp_path / "real" / ".cache" / "assay"
    done = _inner_session(tmp_path, CLEAN.format(tool=str(cache / "local-model")))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "user folders changed" not in done.stdout
    assert sorted(p.relative_to(tmp_path / "real") for p in (tmp_path / "real").rglob("*") if p.is_file()) == [
        Path(".cache/assay/local-model/llama-server")  # the real_model tier's own cache, left out of the check
    ]


def test_a_session_writing_the_real_cache_fails_naming_the_files(tmp_path: Path) -> None:
    cache = tmp_path / "real" / ".cache" / "assay"
    kept = cache / "judge" / "cache.sqlite"
    kept.parent.mkdir(parents=True)
    kept.write_text("answers")
    done = _inner_session(tmp_path, DIRTY.format(cache=str(cache), kept=str(kept)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed" in done.stdout and "user folders changed" in done.stdout
    text = " ".join(done.stdout.split())
    assert f"{cache / 'judge' / 'cards' / 'offline' / 'card.json'} (added)" in text
    assert f"{cache / 'judge' / 'cards'} (added)" in text and f"{kept} (changed)" in text
