"""Reproducible benchmarks shipped with memvault (``memvault bench …``)."""
