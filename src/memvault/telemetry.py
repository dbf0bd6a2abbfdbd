"""Dependencies' telemetry, switched off before any of them loads.

Importing memvault runs :func:`switch_off` on the process environment, so the variables below
are set before onnxruntime (imported by the first embedding) or anything memvault starts can read
them. A variable you set yourself is left as it is: that is the documented way to opt in.

- onnxruntime's official wheels upload usage events to Microsoft by default (1DS): a device id
  and an event queue under ``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` and a session file
  in the temporary directory. ``ORT_DISABLE_TELEMETRY=1``, read when onnxruntime is imported,
  creates none of them and starts no uploader.
- huggingface_hub (a dependency of tokenizers; memvault loads its tokenizers from files and never
  calls the Hub) sends usage pings on downloads unless ``HF_HUB_DISABLE_TELEMETRY=1``.

spaCy (the offline learner's parser) loads its pipeline from the installed package and sends
nothing. httpx, the MCP SDK (OpenTelemetry API only: spans go nowhere unless your application
installs an exporter) and LangGraph/LangSmith (tracing only when ``LANGSMITH_TRACING`` is set)
send nothing on their own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

OFF: Mapping[str, str] = {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
"""Each dependency's own switch, and the value that turns its telemetry off."""


def switch_off(environ: MutableMapping[str, str]) -> None:
    """Set every switch in :data:`OFF` that ``environ`` does not set already."""
    for name, value in OFF.items():
        environ.setdefault(name, value)


def onnxruntime_allowed(environ: Mapping[str, str]) -> bool:
    """Whether the environment opts in to onnxruntime's telemetry (onnxruntime reads "1",
    "true", "yes" or "on" as off, anything else as on)."""
    return environ.get("ORT_DISABLE_TELEMETRY", "").lower() not in {"1", "true", "yes", "on"}


switch_off(os.environ)
