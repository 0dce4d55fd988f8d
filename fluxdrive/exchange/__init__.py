"""What agents and their callers exchange through files while a review runs: the peer-findings channel
(a local file, or a Redis stream across machines) and the write-behind verdicts."""
