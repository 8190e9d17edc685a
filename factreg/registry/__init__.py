"""What a fact is and how it is kept: storage, migrations, facts and their versions, conditions, integrity
flags, freshness and status, the metric vocabulary, ids, JSONL export/import, and a fact's history (change points).

Nothing here measures, renders or talks to the network; everything above builds on it."""
