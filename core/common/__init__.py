"""Small helpers every layer shares: errors, paths and private files, progress events, checkpoints of released
outputs, the guarantee in words, prompt templates, links and the junk rule. They import nothing else of Privet."""
