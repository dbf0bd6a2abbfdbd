"""``python -m memvault`` runs the CLI."""

from .cli import main

main()
