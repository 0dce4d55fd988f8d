"""The ground floor: stdlib-level building blocks every layer may use (atomic writes, confined reads,
git, masking, timestamps, worker pools). Nothing here knows what a review is."""
