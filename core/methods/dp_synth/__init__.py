"""DP-Synth (docs/method.md §4.1): private prediction over random disjoint batches, its facts and its adapter."""
