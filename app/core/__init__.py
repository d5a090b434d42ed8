"""The pure core: a scenario in, JSON-ready numbers out. No web framework, no torch, no I/O.

Packages, in the order a scenario passes through them (each may import only those above it
in this list; `.importlinter` enforces it):

support    two helpers every stage may use (a collector pause, sorted runs)
layout     ranks <-> (dp, pp, tp) coordinates, groups, nodes, rank orders
schedules  each schedule's per-rank action order, its placement (Pipeline), the deadlock dry run
simulate   actions + durations -> a timeline
inputs     the validated inputs: a view's Scenario, model and hardware specs, worker records
cost       memory, FLOPs, bytes and seconds of every action and of the step
teach      the article's advice and the quiz
views      view models: prediction sections, flow frames, captions, formula cards, primers
evaluate   drivers: one scenario through the stages, and the many-scenario tools on top of it
           (planner, compare, sweep, primer page)
fidelity   published measured runs, the accuracy board, error bands, measured-run analysis
"""
