"""Runtime: eager launch (and, with the compiler, compile orchestration, cache,
fallback chain, statistics).  The only place that calls ``Backend.launch``."""
