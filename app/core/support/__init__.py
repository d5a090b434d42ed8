"""Two helpers any stage may use: a garbage-collector pause around allocation-heavy loops
(gc_pause) and sorted merges of runs (sorted_runs). Imports nothing of the core."""
