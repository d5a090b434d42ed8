"""PyTorch profiler (Kineto) traces -> the probe's records (issue 25, item 1). Pure: it takes
each rank's trace as the parsed JSON dict (app/importers reads the files), and returns
RunInfo and ProbeRecord values that the live store keeps as it keeps the probe's.

The stages, in the order an import runs them:
    kineto    one rank's dict -> RankTrace: its rank, steps, and classified spans
    axes      the layout (given, or inferred from the groups seen); each collective's axis
    align     each rank's clock offset from collective ends, and the residual
    records   RankTrace + layout + offsets -> RunInfo and ProbeRecords
    stragglers  the slow ranks (which phase, by how much against their stage) and slow links
"""

from app.core.traces.align import Alignment, align
from app.core.traces.axes import infer_layout, label_run
from app.core.traces.kineto import parse_rank
from app.core.traces.records import RunShape, build_run
from app.core.traces.spans import RankTrace, Span, StepSpans, TraceError
from app.core.traces.stragglers import Straggler, find_stragglers

__all__ = [
    "Alignment",
    "RankTrace",
    "RunShape",
    "Span",
    "StepSpans",
    "Straggler",
    "TraceError",
    "align",
    "build_run",
    "find_stragglers",
    "infer_layout",
    "label_run",
    "parse_rank",
]
