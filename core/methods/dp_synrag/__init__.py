"""DP-SynRAG (docs/method.md §2), in folders by Algorithm 1's steps: ``release/`` (every charged stage), ``shape/``
(the corpus's shape, post-processing of released values), ``write/`` (the documents) and ``vocab/`` (the public
vocabulary); ``algorithm.py`` is the paper's steps calling them, ``method.py`` the pipeline's adapter."""
