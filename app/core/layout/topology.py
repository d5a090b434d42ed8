"""Rank layout of a DP x TP x PP (x CP, EP) mesh: rank <-> coordinate, groups, nodes.

The rank order is a tuple of axes, fastest-varying first. The default ``tp-pp-dp`` is the
source article's ``ParallelConfig`` demo: ``tp = r % TP``, ``pp = (r // TP) % PP``,
``dp = r // (TP * PP)``, which is also what ``init_device_mesh(..., (dp, pp, tp))`` builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from app.core.layout import mesh
from app.core.support.echo import echo

AXES: tuple[str, ...] = ("dp", "pp", "tp")  # the article's three; cp and ep: mesh.py
DEFAULT_ORDER: tuple[str, ...] = ("tp", "pp", "dp")

# Where real frameworks put each axis. Megatron-LM (megatron/core/parallel_state.py,
# order "tp-cp-ep-dp-pp"), DeepSpeed's PipeModelDataParallelTopology (axes pipe, data, model)
# and torchtitan (parallel_dims.py, mesh ["pp", "dp", "tp"]) all place dp inside pp;
# picotron (process_group_manager.py, grid [dp, pp, tp]) matches the article.
# ``megatron-5d`` is Megatron's default order string itself, cp and ep named.
ORDER_PRESETS: dict[str, tuple[str, ...]] = {
    "article": DEFAULT_ORDER,
    "picotron": ("tp", "pp", "dp"),
    "megatron": ("tp", "dp", "pp"),
    "deepspeed": ("tp", "dp", "pp"),
    "torchtitan": ("tp", "dp", "pp"),
    "megatron-5d": ("tp", "cp", "ep", "dp", "pp"),
}


def parse_order(text: str) -> tuple[str, ...]:
    """Parse ``tp-pp-dp`` (cp and ep optional, e.g. ``tp-cp-dp-pp``) or a preset name into
    an axis tuple, fastest first."""
    name = text.strip().lower()
    if name in ORDER_PRESETS:
        return ORDER_PRESETS[name]
    axes = tuple(a.strip() for a in name.replace(",", "-").split("-") if a.strip())
    if not mesh.valid_axes(axes):
        presets = ", ".join(ORDER_PRESETS)
        raise ValueError(
            f"order {echo(text)} must be a permutation of dp, pp, tp joined by '-' "
            f"(e.g. tp-pp-dp) or one of: {presets}"
        )
    return axes


@dataclass(frozen=True)
class Coord:
    dp: int
    pp: int
    tp: int
    cp: int = 0
    ep: int = 0  # the rank's place in its expert-parallel group (the expert grid)

    def get(self, axis: str) -> int:
        return getattr(self, axis)


@dataclass(frozen=True)
class Layout:
    """Where every global rank sits. Frozen; all derived tables are computed once, lazily.
    world = tp x cp x pp x dp; the expert grid etp x ep x edp folds over tp x cp x dp as
    Megatron's (mesh.py); etp None is tp (Megatron's default)."""

    dp: int
    tp: int
    pp: int
    order: tuple[str, ...] = DEFAULT_ORDER
    gpus_per_node: int = 8
    cp: int = 1
    ep: int = 1
    etp: int | None = None

    def __post_init__(self) -> None:
        for axis in (*AXES, "cp", "ep"):
            if getattr(self, axis) < 1:
                raise ValueError(f"{axis} must be >= 1, got {getattr(self, axis)}")
        if self.etp is not None and self.etp < 1:
            raise ValueError(f"etp must be >= 1, got {self.etp}")
        if self.gpus_per_node < 1:
            raise ValueError(f"gpus_per_node must be >= 1, got {self.gpus_per_node}")
        if not mesh.valid_axes(tuple(self.order)):
            raise ValueError(f"order {self.order} must be a permutation of {AXES}")
        problem = mesh.fold_problem(tuple(self.order), self._sizes)
        if problem:
            raise ValueError(
                f"ep={self.ep}, etp={self.expert_tp} do not fold over tp x cp x dp ({problem})"
            )

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def expert_tp(self) -> int:
        """The expert layers' tensor-parallel size: etp, or tp when not given."""
        return self.etp or self.tp

    @property
    def _sizes(self) -> dict[str, int]:
        sizes = {"dp": self.dp, "tp": self.tp, "pp": self.pp, "cp": self.cp, "ep": self.ep}
        return {**sizes, "etp": self.expert_tp}

    def size(self, axis: str) -> int:
        return self._radix[axis][1]

    @cached_property
    def _radix(self) -> dict[str, tuple[int, int]]:
        """(stride, size) of every axis: tp, cp, dp, pp on the dense grid; etp, ep, edp (and
        pp again, the same groups) on the expert grid."""
        sizes = self._sizes
        esizes = mesh.expert_sizes(sizes)
        out = {a: (st, esizes[a]) for a, st in mesh.strides(self.expert_order, esizes).items()}
        out.update({a: (st, sizes[a]) for a, st in mesh.strides(self.dense_order, sizes).items()})
        return out

    @property
    def dense_order(self) -> tuple[str, ...]:
        return mesh.dense_order(tuple(self.order))

    @property
    def expert_order(self) -> tuple[str, ...]:
        return mesh.expert_order(tuple(self.order))

    @cached_property
    def strides(self) -> dict[str, int]:
        """Rank distance between neighbours along each axis (mixed-radix place values)."""
        return {a: st for a, (st, _) in self._radix.items()}

    def _at(self, rank: int, axis: str) -> int:
        stride, n = self._radix[axis]
        return (rank // stride) % n

    def coord(self, rank: int) -> Coord:
        if not 0 <= rank < self.world_size:
            raise ValueError(f"rank {rank} outside world of {self.world_size}")
        return Coord(**{a: self._at(rank, a) for a in (*AXES, "cp", "ep")})

    def rank_of(self, dp: int, pp: int, tp: int, cp: int = 0) -> int:
        s = self.strides
        return dp * s["dp"] + pp * s["pp"] + tp * s["tp"] + cp * s["cp"]

    def node(self, rank: int) -> int:
        return rank // self.gpus_per_node

    def group(self, axis: str, rank: int) -> list[int]:
        """The ranks that share every coordinate with ``rank`` except ``axis`` (on the expert
        grid for etp, ep and edp)."""
        stride, n = self._radix[axis]
        base = rank - self._at(rank, axis) * stride
        return [base + i * stride for i in range(n)]

    def groups(self, axis: str) -> list[list[int]]:
        """All groups of one axis, ordered by their smallest rank."""
        stride, n = self._radix[axis]
        leaders = [r for r in range(self.world_size) if (r // stride) % n == 0]
        return [[lead + i * stride for i in range(n)] for lead in leaders]

    def crosses_node(self, axis: str) -> bool:
        """True when any group of ``axis`` spans more than one node."""
        if axis not in self._crossings:
            return self._crossing(axis)
        return self._crossings[axis]

    @cached_property
    def _crossings(self) -> dict[str, bool]:
        return {axis: self._crossing(axis) for axis in AXES}

    def _crossing(self, axis: str) -> bool:
        (stride, n), gpn = self._radix[axis], self.gpus_per_node
        span = (n - 1) * stride  # rank distance from a group's first member to its last
        if n == 1:
            return False
        if span >= gpn:
            return True
        # A group's first member sits at block + j for j < stride.
        blocks = range(0, self.world_size, stride * n)
        return any((b + j) % gpn + span >= gpn for b in blocks for j in range(stride))

    # The article's ParallelConfig names, kept so its demo reads the same here.
    def allreduce_group(self, rank: int) -> list[int]:
        return self.group("dp", rank)

    def pp_downstream(self, rank: int) -> int | None:
        c = self.coord(rank)
        return None if c.pp == self.pp - 1 else self.rank_of(c.dp, c.pp + 1, c.tp, c.cp)

    def pp_upstream(self, rank: int) -> int | None:
        c = self.coord(rank)
        return None if c.pp == 0 else self.rank_of(c.dp, c.pp - 1, c.tp, c.cp)

    def ranks_of_stage(self, stage: int) -> list[int]:
        """Every rank holding pipeline stage ``stage``: all DP replicas, CP and TP shards."""
        return [
            self.rank_of(d, stage, t, c)
            for d in range(self.dp)
            for c in range(self.cp)
            for t in range(self.tp)
        ]


def seed_active_ranks(layout: Layout, microbatches: int) -> list[list[int]]:
    """The article's 'active GPUs per time step': stage s works on micro-batch t - s."""
    steps = microbatches + layout.pp - 1  # the article: fill to drain is m + p - 1 steps
    return [
        [r for r in range(layout.world_size) if 0 <= t - layout.coord(r).pp < microbatches]
        for t in range(steps)
    ]


# The article's demo as URL queries: ``ParallelConfig(dp=2, tp=2, pp=2)`` with 4 micro-batches
# and its lock-step time steps (naive forwards, 1 time unit each, free hops), then the path it
# grows along: 1F1B (one forward, one backward), interleaved (virtual stages), and its layout
# rule "TP=8 fills a node's NVLink, PP spans nodes, DP multiplies the line".
ARTICLE_DEMO: dict[str, str] = {
    "dp": "2", "tp": "2", "pp": "2", "microbatches": "4",
    "schedule": "naive", "f_time": "1", "p2p_time": "0",
}  # fmt: skip
ARTICLE_PATH: tuple[tuple[str, dict[str, str]], ...] = (
    ("demo", ARTICLE_DEMO),
    ("1f1b", {**ARTICLE_DEMO, "schedule": "1f1b", "b_time": "2"}),
    ("interleaved", {**ARTICLE_DEMO, "schedule": "interleaved", "virtual_stages": "2",
                     "b_time": "2"}),
    ("node", {"dp": "2", "tp": "8", "pp": "8", "microbatches": "16", "gpus_per_node": "8",
              "schedule": "1f1b"}),
)  # fmt: skip


def article_printout(layout: Layout) -> list[dict[str, object]]:
    """One row per rank, as the article's ``simulate_3d_parallel`` prints it: coordinate
    (DP, PP, TP), gradient-sync group and pipeline downstream (None on the last stage)."""
    return [
        {
            "rank": r,
            "coord": layout.coord(r),
            "sync_group": layout.allreduce_group(r),
            "downstream": layout.pp_downstream(r),
        }
        for r in range(layout.world_size)
    ]


def active_by_step(layout: Layout, events: list[dict[str, object]]) -> list[dict[str, object]]:
    """The ranks computing a forward at each distinct start time of a simulated timeline:
    the article's 'active GPUs per time step', read off the core's events, not re-derived."""
    forwards = [e for e in events if e["kind"] == "F"]
    steps = []
    for t in sorted({e["start"] for e in forwards}):
        stages = {e["stage"] for e in forwards if e["start"] <= t < e["end"]}
        ranks = sorted(r for s in stages for r in layout.ranks_of_stage(s))
        steps.append({"start": t, "ranks": ranks})
    return steps
