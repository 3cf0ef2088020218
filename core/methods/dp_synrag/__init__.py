"""DP-SynRAG (docs/method.md §2): the algorithm, its vocabulary and its pipeline adapter."""
