"""Building what the LLM sees: the message window of a session and the system prompt."""
