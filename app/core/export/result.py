"""What an export gives back: the text to copy, or a refusal naming why the framework cannot
run the configuration. Language-free, as the core is: ``code`` and ``params`` name the reason
in the catalogues (``export.cannot.<code>``), ``reason`` is its English wording."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Framework:
    """The framework release whose spelling an export uses, and the file that spells it."""

    name: str
    version: str
    commit: str
    source: str  # the file whose argument names the export follows

    @property
    def cite(self) -> str:
        return f"{self.name} {self.version} ({self.commit[:10]}), {self.source}"


# Megatron-LM's last release whose arguments.py spells every flag literally (from core_v0.16
# on the TransformerConfig flags are generated from dataclass fields); same names since.
MEGATRON = Framework(
    "Megatron-LM", "core_v0.15.3", "309ffca6a40553362d44fd17efc56b772fa1aa44",
    "megatron/training/arguments.py",
)  # fmt: skip
# torchtitan's release v0.2.2, the last with TOML job configs (job_config.py's dataclasses).
TORCHTITAN = Framework(
    "torchtitan", "v0.2.2", "73a0e6979dd10b6b1904098eb3c8f62c18ab87ce",
    "torchtitan/config/job_config.py",
)  # fmt: skip
# The action CSV read by _PipelineScheduleRuntime._load_csv (_Action.from_str).
TORCH = Framework(
    "PyTorch", "2.13.0", "v2.13.0", "torch/distributed/pipelining/schedules.py"
)  # fmt: skip


@dataclass(frozen=True)
class Export:
    """One export. ``ok`` False: ``text`` is empty and ``code``/``reason`` say why."""

    format: str
    framework: Framework
    text: str = ""
    code: str | None = None
    reason: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what the framework does differently, in English

    @property
    def ok(self) -> bool:
        return self.code is None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": self.format,
            "ok": self.ok,
            "framework": self.framework.name,
            "version": self.framework.version,
            "commit": self.framework.commit,
            "source": self.framework.source,
            "text": self.text,
            "notes": list(self.notes),
        }
        if not self.ok:
            out["cannot"] = {"code": self.code, "reason": self.reason, "params": self.params}
        return out


class Cannot(Exception):
    """Raised inside an exporter: the framework cannot run this configuration."""

    def __init__(self, code: str, reason: str, **params: Any) -> None:
        super().__init__(reason)
        self.code, self.reason, self.params = code, reason, params

    @classmethod
    def keyed(cls, code: str, template: str, /, **params: Any) -> Cannot:
        return cls(code, template.format(**params), **params)
