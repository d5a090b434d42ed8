"""Tunables of the live pipeline (ingest, store, fan-out, liveness), with their reasons.

Defaults are what ``create_app`` uses. A test may put its own ``LiveConfig`` on
``app.state.live_config`` before the app starts; the lifespan reads it from there.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.inputs.protocol import MAX_FRAME_BYTES


@dataclass(frozen=True)
class LiveConfig:
    # --- ingest ---------------------------------------------------------------------------
    max_frame_bytes: int = MAX_FRAME_BYTES  # the protocol's own cap: a 20k-event record fits
    # Token bucket per producer connection. A rank sends one record per step plus a
    # heartbeat; 500 frames/s with a burst of 2000 lets a reconnecting reporter replay its
    # spool quickly while one misbehaving client cannot monopolise the writer.
    rate_frames_per_s: float = 500.0
    rate_burst: int = 2000
    max_strikes: int = 10  # invalid frames on one connection before it is closed with 1008
    max_inflight: int = 512  # records read but not yet committed, per connection
    max_ingest_connections: int = 4096
    # --- store ----------------------------------------------------------------------------
    commit_batch: int = 512  # records per transaction at most (group commit)
    # --- fan-out --------------------------------------------------------------------------
    tick_s: float = 0.1  # one coalesced frame per viewer per tick
    queue_frames: int = 32  # per viewer: ~3 s of ticks before the oldest are dropped
    kick_after_s: float = (
        3.0  # a viewer that takes no frame this long after it first failed to is cut off
    )
    max_viewers: int = 2048
    # --- liveness -------------------------------------------------------------------------
    # A sender's beat interval when its hello announces none (older senders, uploads);
    # gpu_probe.reporter announces 0.5 s and beats that often when idle.
    heartbeat_s: float = 5.0
    stale_after_beats: int = 3  # silent for 3 intervals -> stale (dead if disconnected)
    sweep_s: float = 0.25  # how often liveness looks: a dead peer is seen within 2 s
