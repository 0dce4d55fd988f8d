"""Scale-out: reviews whose agents, analysis shards or whole runs execute on a Ray cluster.

Nothing here schedules work itself: Ray places tasks, retries them and
cancels them; this package decides *what* becomes a task (an agent run, a
shard of files, a whole review) and brings the results back to the driver,
where the protocol's files are written exactly as in a local run.
"""
