"""The ``memvault`` command line."""

from .app import cli, main

__all__ = ["cli", "main"]
