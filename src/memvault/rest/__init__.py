"""memvault over REST: the API as values (``endpoints``, ``fields``), shared by the server and
the remote client (``client``: ``Memory("http://host:8765", api_key=…)``, docs/remote.md)."""

from .client import AsyncRemoteMemory, RemoteMemory

__all__ = ["AsyncRemoteMemory", "RemoteMemory"]
