"""How a fact is measured and judged: the verify engine and its verifiers (llama-bench, the streaming probe),
stream parsing, the HTTP client, host information, the machine's state and the control, judging a re-measurement
(its statistics in `factreg.stats`), comparisons, SLOs and capacity."""
