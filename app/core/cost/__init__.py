"""The cost model, one stage per module, read in this order:

shapes    the GEMMs each layer runs, which chunk holds the embedding and the head
flops     FLOPs per layer, per step (model and hardware FLOPs)
memory    per stage: weights, grads (+ fp32 buffer), optimizer, activations, transients,
          fragmentation, floor (memory_states, memory_activations, memory_transients)
compute   seconds of GEMMs, attention and memory-bound kernels on one GPU
comm      bytes per axis and seconds per collective (alpha-beta, NVLink domain, NICs)
durations F/B/W per chunk per rank, with TP communication inside them
overlap   what of the DP and ZeRO communication the compute hides, and what stays exposed
step      one step's cost: simulated pipeline + exposed DP + optimizer

Every module is pure arithmetic over frozen specs (app.core.inputs): no I/O, no clock.
Imports inputs, simulate, schedules, layout and support only.
"""
