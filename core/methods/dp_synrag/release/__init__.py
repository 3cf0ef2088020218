"""What DP-SynRAG releases (Algorithm 1's charged steps): the plan that prices them (``plan``), the size count and the
length statistic (``size``, ``length``), phrase and structure discovery (``phrases``, ``structure``), the keyword
histogram (``keywords``, ``histogram``), soft clusters and their co-keywords (``clusters``), the clusters' label
counts (``topic_labels``), retrieval refinement (``refinement``), the bounded rows of private prediction
(``row_bound``); ``cluster_index`` makes the cluster stages linear in the corpus. Each stage is charged before it draws."""
