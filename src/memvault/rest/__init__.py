"""memvault over REST, below the catalogue (:mod:`memvault.api`): the wire format —
``endpoints`` (an endpoint as a value), ``fields`` (typed fields), ``answers`` (an answer's
codec), ``codec`` (arguments → requests, answers and errors → values) — and the transport
(``transport``: the ``httpx`` senders, imported only when a memory on a server opens)."""
