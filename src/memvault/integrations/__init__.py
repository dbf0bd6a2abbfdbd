"""memvault where agents live: an MCP server, a LangGraph store."""
