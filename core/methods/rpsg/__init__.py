"""RPSG (docs/method.md §3): the algorithm, its PII masking and its pipeline adapter."""
