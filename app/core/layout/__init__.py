"""Where each rank sits: rank <-> (dp, pp, tp[, cp]) under a rank order (tp fastest by
default, the article's ParallelConfig), its groups and nodes (topology), cp and ep as
Megatron-LM folds them (mesh), and the frameworks' named orders (orders). Imports only
support."""
