"""How right the model is: published measured runs (published_runs), each predicted by the
cost model (board), the error bands drawn from them (bands), and the analysis of a measured
run's records (measured). The top layer: imports evaluate and every stage."""
