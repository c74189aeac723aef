"""Which committed files a session used, across xdist workers and CI shards: cassettes and tool tapes left
behind by a renamed or deleted test, and the shard reports that ``agentloom combine`` merges."""
