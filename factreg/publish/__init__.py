"""What gets written into the repository: rendering (jinja2), the stale-fact report and fact pages, decision
records, correction notes, and the writer that writes files atomically and commits exactly those."""
