"""How a fact is measured and judged: the verify engine and its verifiers (llama-bench, the streaming probe),
stream parsing, the HTTP client, host information, verdicts, comparisons and quantile statistics."""
