"""Where each rank sits: rank <-> (dp, pp, tp) under a rank order (tp fastest by default, the
article's ParallelConfig), its groups and nodes (topology), and the frameworks' named orders
(orders). Imports only support."""
