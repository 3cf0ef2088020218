"""What writes DP-SynRAG's documents (Algorithm 1's step 4): each cluster's text (``text``; private prediction's
groups over the clusters' rows: ``private_rows``), the public realisation
of released topics in the shipped form (``realisation``) or in the corpus's own released forms (``form_writer``),
public decoding and its logit shaping (``public_decoding``, ``logit_shaping``), released words' roles and slots
(``roles``, ``slots``, ``lead_phrases``), sentence cuts (``sentence_cuts``), the demonstration guard and the public
example's check (``demonstration_guard``, ``example_check``), near-duplicates dropped (``dedup``), and the writer's
progress and checkpoints (``writing_progress``, ``written_documents``). Post-processing, except the token stage of
private prediction that ``text`` calls."""
