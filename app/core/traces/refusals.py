"""The refusals an import says most, keyed, so /runs can word them in the page's language.

Each key's English template is here and, word for word, in the English catalogue as
``err.trace.<key>`` (tests/importers/test_refusal_keys.py holds them equal and the other
languages to the same placeholders). ``refuse`` fills it: the TraceError's message is the
English text, as the CLI prints it, and its ``key``/``params`` travel in the upload's 422
detail (``type`` trace.<key>, ``ctx`` the params) as a ScenarioError's do. A refusal not
listed here stays English everywhere: it is kept for what a user rarely meets.
"""

from __future__ import annotations

from app.core.traces.spans import TraceError

TEMPLATES = {
    "too_big": "{file}: {size} bytes is over the {limit}-byte limit per file",
    "unpacks_too_big": "{file}: unpacks to over {limit} characters of JSON (a .gz bomb?)",
    "unreadable": "{file}: cannot be read ({error}); a truncated .gz?",
    "not_trace": "{file}: is not a PyTorch profiler trace ({error})",
    "no_rank": "{file}: has no distributedInfo.rank, so its rank is unknown (torch.profiler "
    "writes it when torch.distributed is initialised before profiling)",
    "rank_outside": "{file}: distributedInfo has rank {rank} outside world_size {world}",
    "no_steps": "{file}: has no ProfilerStep#N ranges, so its steps are unknown (call "
    "prof.step() once per training step)",
    "rank_again": "{file}: rank {rank} again (also in {other})",
    "world_differs": "{file}: world_size {world}, but {other} has {other_world}: not one run",
    "unknown_format": "{file}: is neither a PyTorch profiler trace, a torchtitan structured "
    "log, a Megatron log with per-rank timers nor a DeepSpeed log with wall_clock_breakdown",
    "mixed_formats": "{file}: a {format} file, but {other} is a {other_format} file: import "
    "one format at a time",
    "empty_upload": "{file}: the upload is empty",
    "not_tar": "{file}: cannot be read as a tar ({error}); a truncated archive?",
    "archive_empty": "{file}: holds no files",
    "archive_too_big": "{file}: the archive unpacks to over {limit} bytes",
    "member_not_file": "{file}: not a regular file (a link or a device)",
    "member_name": "{file}: not a trace or log by its name ({suffixes})",
    "member_twice": "{file}: a second file named {name} (also {other})",
    "too_many_members": "{file}: more than {limit} files in one archive",
    "cycle_mixed": "{file} and {other} are not in iteration_N directories of one folder: a tar "
    "of profiling cycles holds one traces folder's iteration_N directories and nothing else",
    "rank_not_in_layout": "{file}: rank {rank} of a world of {world} does not fit {layout} "
    "({ranks} ranks)",
    "group_uneven": "process group {group} is not evenly spaced, so it is the group of no "
    "axis in any rank order of dp, tp, cp and pp",
    "group_no_axis": "{where}process group {group} is no group of tp, cp, ep, dp or pp under "
    "{layout}: give the layout with --dp --tp --pp --cp --ep --order",
    "send_not_stages": "{where}{kind} between ranks {rank} and {peer} is not between pipeline "
    "stages under {layout}",
    "send_not_stages_cp": "{where}{kind} between ranks {rank} and {peer} is not between "
    "pipeline stages or CP ranks under {layout}",
    "no_group_ranks": "{where}collective {op} has no Process Group Ranks (the backend did not "
    "record them) and {layout} has {axes} collective axes",
    "align_refused": "clock alignment refused: after the offsets found, one collective's ends "
    "still differ by {residual_ms} ms, more than a step ({step_ms} ms): the files profiled "
    "different steps, or are not of one run",
    "log_step_again": "{file}: rank {rank} step {step} again (also in {other}): duplicate "
    "ranks, or two runs mixed",
    "run_exists": "run '{run}' exists with another config ({fields})",
    "too_large": "the imported run is too large to serve: {problem}",
}


def refuse(key: str, **params: object) -> TraceError:
    """The TraceError of ``key`` (TEMPLATES), its English message filled from ``params``."""
    return TraceError(TEMPLATES[key].format(**params), key=key, params=params)
