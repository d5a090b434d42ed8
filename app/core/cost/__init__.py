"""The cost model, one stage per module, read in this order:

training  what a step does (micro-batches, precision, ZeRO, recompute, overlap)
shapes    the GEMMs and the layer split each rank runs
flops     FLOPs per layer, per step (model and hardware FLOPs)
memory    parameters, weights/grads/optimizer/activations per stage
compute   seconds of GEMMs, attention and memory-bound kernels on one GPU
comm      bytes per axis and seconds per collective (alpha-beta, NVLink domain, NICs)
durations F/B/W per chunk per rank, with TP communication inside them
overlap   what of the DP and ZeRO communication the compute hides, and what stays exposed
step      one step's cost: simulated pipeline + exposed DP + optimizer
view      the JSON sections the pages draw

Every module is pure arithmetic over frozen specs: no I/O, no clock.
"""
