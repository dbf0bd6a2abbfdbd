"""The REST server: memvault's store API over HTTP (``memvault serve``, ``memvault[server]``)."""

from .app import create_app

__all__ = ["create_app"]
