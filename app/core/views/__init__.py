"""View models: numbers computed for a page to draw, never by it. The prediction's sections
(prediction), which step time is shown (step_period: ZB-H2's steady state), flow frames and
captions (flow, flow_captions), the Chrome trace, compare's diff (compare_view), formula cards
(formula_cards, formula_bubble, formula_tokens) and the primers' data (collectives_primer,
zero_primer, memory_timeline). Imports teach and every stage below it, never evaluate or
fidelity."""
