"""Retrieval: lexical terms, chunking, scorers, fusion and the ranker — pure logic, no I/O."""
