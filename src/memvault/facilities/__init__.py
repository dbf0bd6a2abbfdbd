"""The four facilities on the scoped store: Records, Session Memory, Findings, Global Memory."""
