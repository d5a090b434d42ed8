"""Strings of the live pages (/runs and /runs/{run}), in English and Chinese.

Keys used from JS take ``{name}`` placeholders that ``fill()`` in static/js/i18n.js replaces.
"""

from __future__ import annotations

LIVE: dict[str, tuple[str, str]] = {
    "nav.runs": ("Runs", "实测运行"),
    "live.tagline": ("live run", "实时运行"),
    "live.runs_tagline": ("measured runs", "实测运行列表"),
    "live.run": ("Run", "运行"),
    "live.no_record": ("no record of this run yet", "还没有这次运行的记录"),
    # An announced run: the store has its row (a probe rank said hello), no step record yet.
    "live.announced": (
        "Announced: a probe has said hello for this run, but no rank has sent a step record "
        "yet. This page shows each record as soon as it arrives.",
        "已登记：探针已经为这次运行打过招呼，但还没有任何 GPU 发来单步记录。"
        "记录一到，本页就会立即显示。",
    ),
    # The 404 page of /runs/{run}: a run name the store has never heard of.
    "live.missing_title": ("No such run", "没有这个运行"),
    "live.missing_heading": ("No run named {run}", "没有名为 {run} 的运行"),
    "live.missing_text": (
        "The server has no record of a run with this name: check the link for a typo, or "
        "open one of the runs below.",
        "服务器上没有叫这个名字的运行：请检查链接是否拼错，或打开下面列出的某个运行。",
    ),
    "live.missing_watch": (
        "If a probe is about to start this run, keep the page open: it checks every {s} s and "
        "opens the run's live page as soon as the run is announced.",
        "如果探针马上就要启动这次运行，请保持本页打开：它每 {s} 秒检查一次，"
        "运行一登记就会自动打开它的实时页面。",
    ),
    "live.known_runs": ("Known runs, newest first", "已有的运行（最新的在前）"),
    "live.all_runs": ("All runs", "全部运行"),
    "live.stream_title": (
        "The live feed; 'complete' means no hole since the last refetch.",
        "实时数据流；“完整”表示自上次重新拉取以来没有缺口。",
    ),
    "live.stream.connecting": ("connecting…", "连接中…"),
    "live.stream.reconnecting": ("reconnecting…", "重新连接中…"),
    "live.stream.resync": ("catching up…", "补齐中…"),
    "live.stream.live": ("live…", "实时…"),
    "live.stream.complete": ("live · complete", "实时 · 完整"),
    "live.config": (
        "dp {dp} × tp {tp} × pp {pp} · {schedule} · {m} microbatches{chunks} · {device} · "
        "{dtype} · {steps} steps",
        "dp {dp} × tp {tp} × pp {pp} · {schedule} · {m} 个微批次{chunks} · {device} · "
        "{dtype} · {steps} 步",
    ),
    "live.chunks": (" · {v} chunks", " · 每卡 {v} 个模型块"),
    "live.steps_complete": ("steps complete", "已完成步数"),
    "live.records": ("records", "记录数"),
    "live.last_step_time": ("last step time", "最近一步用时"),
    "live.last_event": ("last event {time}", "最后事件 {time}"),
    "live.timeline": ("Measured timeline, step", "实测时间线 · 步"),
    "live.step": ("step", "步"),
    "live.follow": ("follow the latest step", "跟随最新一步"),
    "live.measured_pipe": ("measured pipeline", "实测流水线"),
    "live.predicted": ("predicted", "预测"),
    "live.ranks_in_step": ("ranks in this step", "本步已上报的 GPU"),
    "live.left_out": ("{n} short events not drawn", "{n} 个极短事件未画出"),
    "live.timeline_hint": (
        "One row per rank, grouped by (dp, pp, tp). The grey ghost under each row is the "
        "core's simulation of this schedule fed with this run's mean F/B/W durations per "
        "stage; arrows go from each pipeline send to its receive.",
        "每个 GPU 一行，按 (dp, pp, tp) 分组。每行下方的灰色影子，是用这次运行各阶段 F/B/W "
        "的平均实测时长喂给核心模拟器得到的预测；箭头从每次流水线发送指向对应的接收。",
    ),
    "live.where": ("Where the step went", "这一步的时间花在哪里"),
    "live.where_hint": (
        "Compute, then the bubble split into its causes: the warm-up/cool-down the schedule "
        "itself implies, waiting for pipeline peers beyond it, TP and DP collectives, and "
        "host time no event covers.",
        "先是计算，再把气泡拆成几种原因：调度本身的预热/收尾空闲、超出调度预期的等待流水线"
        "上下游、TP 与 DP 集合通信，以及没有任何事件覆盖的主机时间。",
    ),
    "live.grid": ("Rank grid", "GPU 网格热力图"),
    "live.metric": ("metric", "指标"),
    "live.metric.step_time_s": ("step time", "单步用时"),
    "live.metric.idle_frac": ("idle %", "空闲比例"),
    "live.metric.comm_frac": ("comm %", "通信比例"),
    "live.metric.mem_bytes": ("peak memory", "峰值显存"),
    "live.grid_hint": (
        "Rows are pipeline stages, columns (dp, tp) pairs: a straggler or the first stage's "
        "memory peak stands out.",
        "行是流水线阶段，列是 (dp, tp) 组合：拖后腿的 GPU 或第一阶段的显存峰值一眼可见。",
    ),
    "live.advice": ("Advice for this run", "针对这次运行的建议"),
    "live.advice_wait": ("waiting for a step…", "等待第一步完成…"),
    "live.advice_none": ("No rule fires for this step.", "这一步没有触发任何调优规则。"),
    "live.advice_hint": (
        "The same tuning rules the planner applies to predictions, fed with this step's "
        "measured TP, DP and pipeline-wait shares.",
        "与规划器用于预测的调优规则相同，这里输入的是本步实测的 TP、DP 与流水线等待占比。",
    ),
    "live.residuals": ("Predicted vs measured, per action", "逐个动作：预测与实测对比"),
    "live.trend": ("Step time over the run", "整个运行的单步用时"),
    "live.events": ("Run events", "运行事件"),
    "live.copied": ("link copied", "链接已复制"),
    "live.status.waiting": ("waiting", "等待中"),
    "live.status.running": ("running", "运行中"),
    "live.status.done": ("done", "已完成"),
    "live.status.failed": ("failed", "失败"),
    "live.status.stale": ("stale", "无响应"),
    "live.status.incomplete": ("incomplete", "不完整"),
    # The run ended (or stalled) with rank-steps the server never received: they wait in the
    # probe's spool, and `meshscope upload` sends them.
    "live.unreceived": (
        "incomplete: {n} records not yet received. The probe's spool holds them: "
        "meshscope upload SPOOL_DIR --server URL sends them.",
        "不完整：还有 {n} 条记录未收到。它们保存在探针的本地缓存中，"
        "运行 meshscope upload SPOOL_DIR --server URL 即可补传。",
    ),
    "live.rank_states": ("Ranks", "各 GPU 状态"),
    "live.rank_states_hint": (
        "One square per rank. Stale: alive (it still beats) but no new step for a while. "
        "Dead: its connection closed or its heartbeats stopped. Ended: finished with records "
        "not yet received.",
        "每个方块是一个 GPU。无响应：进程仍有心跳，但一段时间没有新步。"
        "已失联：连接断开或心跳停止。已结束：跑完了，但还有记录未收到。",
    ),
    "live.rank.live": ("live", "正常"),
    "live.rank.stale": ("stale", "无响应"),
    "live.rank.dead": ("dead", "已失联"),
    "live.rank.ended": ("ended, records unsent", "已结束，记录未传完"),
    "live.rank.done": ("done", "已完成"),
    "live.rank.missing": ("never connected", "从未连接"),
    "live.rank.unknown": ("unknown", "未知"),
    "live.cause.compute_s": ("compute", "计算"),
    "live.cause.schedule": ("warm-up/cool-down bubble", "预热/收尾气泡"),
    "live.cause.pp_peers": ("waiting for PP peers", "等待流水线上下游"),
    "live.cause.tp": ("TP collectives", "TP 集合通信"),
    "live.cause.dp": ("DP all-reduce", "DP 梯度 AllReduce"),
    "live.cause.host": ("unexplained host time", "未解释的主机时间"),
    "live.kind.F": ("forward", "前向"),
    "live.kind.B": ("backward", "反向"),
    "live.kind.W": ("weight grad", "权重梯度"),
    "live.kind.tp": ("TP all-reduce", "TP AllReduce"),
    "live.kind.pp_recv": ("waiting for input", "等待输入"),
    "live.kind.pp_send": ("send in flight", "发送中"),
    "live.kind.dp": ("DP all-reduce", "DP AllReduce"),
    "live.kind.optim": ("optimizer", "优化器"),
    "live.ghost": ("predicted (ghost)", "预测（影子）"),
    "live.axis.seconds": ("seconds", "秒"),
    "live.axis.step_start": ("seconds from the step's start", "距本步开始的秒数"),
    "live.axis.microbatch": ("microbatch", "微批次"),
    "live.axis.residual": ("measured − predicted end (ms)", "实测 − 预测 结束时刻（毫秒）"),
    "live.axis.step": ("step", "步"),
    "live.axis.slowest": ("seconds (slowest rank)", "秒（最慢的 GPU）"),
    "live.table.mean_per_rank": ("mean per rank", "每个 GPU 的平均"),
    "live.table.seconds": ("seconds", "秒"),
    "live.table.of_step": ("of the step", "占本步"),
    "live.table.kind": ("kind", "类型"),
    "live.table.actions": ("actions", "动作数"),
    "live.table.mean_end": ("mean |end|", "结束时刻平均偏差"),
    "live.table.max_end": ("max |end|", "结束时刻最大偏差"),
    "live.table.mean_duration": ("mean duration", "时长平均偏差"),
    "live.table.step": ("step", "整步"),
    "live.table.predicted": ("predicted {time}", "预测 {time}"),
    "live.table.bubble": ("bubble {pct}", "气泡 {pct}"),
    "live.runs": ("Runs", "运行列表"),
    "live.col.run": ("run", "名称"),
    "live.col.status": ("status", "状态"),
    "live.col.mesh": ("mesh", "并行网格"),
    "live.col.schedule": ("schedule", "调度"),
    "live.col.steps": ("steps", "步数"),
    "live.col.ranks": ("ranks", "GPU 数"),
    "live.col.updated": ("updated", "更新于"),
    "live.none_yet": ("No runs yet. Start one:", "还没有运行。这样启动一个："),
    "live.runs_hint": (
        "The list refreshes every few seconds. A run's page is its share link; it replays the "
        "run after it ends.",
        "列表每隔几秒刷新。每次运行的页面就是它的分享链接；运行结束后可以回放。",
    ),
    "live.ago_s": ("{n} s ago", "{n} 秒前"),
    "live.ago_min": ("{n} min ago", "{n} 分钟前"),
}
