"""Defences for untrusted text: nonce-tagged wrapping, injection scanning, PII redaction."""
