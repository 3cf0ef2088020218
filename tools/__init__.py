"""Developer tools (not installed): import graph, refactor helpers, the vocabulary builder."""
