"""Typed reads of a Hugging Face config.json, each remembering its key, and the error that
names the key it cannot import (app.core.inputs.hf_config, hf_moe)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Config = Mapping[str, Any]
Fields = dict[str, int | bool]  # Scenario field -> value, as the query will carry it


class HFConfigError(ValueError):
    """One config.json key and why it cannot be imported."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key, self.reason = key, reason


class _Reader:
    """Typed reads of a config, remembering which key each Scenario field came from."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.source: dict[str, str] = {}

    def key(self, *names: str) -> str | None:
        """The first of ``names`` the config has (transformers accepts aliases)."""
        return next((n for n in names if self.cfg.get(n) is not None), None)

    def count(self, field: str, *names: str, default: int | None = None) -> int:
        key = self.key(*names)
        if key is None:
            if default is None:
                raise HFConfigError(names[0], "is required and missing")
            self.source[field] = names[0]
            return default
        value = self.cfg[key]
        # bool is an int in Python, and 4096.0 is not a layer count a config would write.
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise HFConfigError(key, f"must be a positive integer, got {_show(value)}")
        self.source[field] = key
        return value

    def flag(self, field: str, name: str, default: bool) -> bool:
        value = self.cfg.get(name)
        if value is None:
            self.source[field] = name
            return default
        if not isinstance(value, bool):
            raise HFConfigError(name, f"must be true or false, got {_show(value)}")
        self.source[field] = name
        return value


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
