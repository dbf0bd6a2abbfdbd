"""Chat models: one abstract primitive, an OpenAI-compatible client, a scripted double."""
