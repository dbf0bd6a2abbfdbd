"""The ``memvault`` command line."""

from . import agents as _agents  # noqa: F401  (registers the commands)
from . import chat as _chat  # noqa: F401
from . import facilities as _facilities  # noqa: F401
from . import learning as _learning  # noqa: F401
from . import mcp as _mcp  # noqa: F401
from . import serve as _serve  # noqa: F401
from . import trust as _trust  # noqa: F401
from .app import cli, main

__all__ = ["cli", "main"]
