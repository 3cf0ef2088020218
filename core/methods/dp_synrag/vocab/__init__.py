"""DP-SynRAG's public keyword vocabulary V and the public word lists every step reads (``vocabulary``), and
``privet vocab`` (``cli``)."""
