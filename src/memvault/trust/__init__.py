"""Trust: what lets a team sign for its memory — erasure with a receipt (``erasure``), and, as
they come, the audit log, retention, session bundles and backups (issue 13)."""
