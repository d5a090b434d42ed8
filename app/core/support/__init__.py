"""Helpers any stage may use: a garbage-collector pause around allocation-heavy loops
(gc_pause), sorted merges of runs (sorted_runs), and the bounded quote of a user's input an
error message carries (echo). Imports nothing of the core."""
