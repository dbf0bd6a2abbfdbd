"""The ``memvault`` command line."""

from . import serve as _serve  # noqa: F401  (registers the command)
from .app import cli, main

__all__ = ["cli", "main"]
