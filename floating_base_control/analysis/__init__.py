"""Analysis tools: model summaries, and (seed 002 Sec. V-B, seed 004) gait geometry."""
