"""The installed version of assay: the ground floor every layer reads it from.

The package root re-exports it as ``assay.__version__``; no module below the root imports the root for it (a test
and the import-linter layers keep it so), since importing ``assay`` from a lower floor points a dependency upwards.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("assay")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
