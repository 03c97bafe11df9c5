"""Analysis tools: model summaries, and ([Mishra2023] Sec. V-B, [Saccon2017]) gait geometry."""
