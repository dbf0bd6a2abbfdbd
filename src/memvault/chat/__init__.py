"""The reference agent, ``memvault chat`` (``docs/chat.md``): a conversation with an
OpenAI-compatible model whose memory is memvault's facilities, with data tools on a DuckDB
database per session. Needs the ``[chat]`` extra (prompt_toolkit, rich, DuckDB)."""
