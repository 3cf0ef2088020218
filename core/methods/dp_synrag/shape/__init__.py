"""What shapes DP-SynRAG's corpus, by post-processing of released values and public rules only: the settings the
adaptive default chooses from the released size (``adaptive``), the document form a task gets (``forms``), the
released topics as records (``released_topics``), topics merged (``merge``), documents allocated and their
co-keywords sampled (``allocation``), and the corpus's shape that the writer follows (``corpus_shape``)."""
