"""What agents use: the facts and the citation tools behind `factreg mcp`."""
