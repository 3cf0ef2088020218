"""Developer tools (not installed): the import graph, the vocabulary builder."""
