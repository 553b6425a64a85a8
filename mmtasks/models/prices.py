"""The price table (``models/prices.yaml``): what an API model's tokens cost, per provider and model.

A reply's cost is its prompt tokens (less those served from the provider's prompt cache) at the
input price, the cached ones at the cached-input price, and its completion tokens (reasoning
included: every provider bills thinking as output) at the output price; a batch request at the
row's batch factor. A model with no row has no cost: :func:`find_price` gives None and the caller
records null with a note, never 0."""

from __future__ import annotations

import datetime
import functools
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mmtasks.config.yaml_loader import read_yaml, validate
from mmtasks.package_data import data_dir

#: the table shipped with mmtasks (beside the model presets)
PRICES_FILE = "prices.yaml"

#: backend -> the provider whose prices it pays (the local backends pay none)
PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini"}

#: a dated snapshot after a row's name: -20250929, -2024-08-06, -001
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{3})$")


class _Rates(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    #: None: the provider bills cached prompt tokens as plain input
    cached_input: float | None = Field(default=None, ge=0)


class LongContext(_Rates):
    """A higher tier for requests whose prompt is over ``above`` tokens."""

    above: int = Field(gt=0)


class PriceRow(_Rates):
    """One row of the table: USD per ``per_tokens`` tokens of the models it names."""

    provider: str
    models: tuple[str, ...] = Field(min_length=1)
    #: the batch API's factor on every token (0.5: half price); None: no batch API priced
    batch: float | None = Field(default=None, gt=0, le=1)
    long_context: LongContext | None = None
    as_of: datetime.date
    source: str = Field(min_length=1)

    def label(self) -> str:
        return f"{self.provider}:{self.models[0]}"

    def record(self) -> dict[str, Any]:
        """The row as results.json records it (what the cost figures were computed with)."""
        return self.model_dump(mode="json", exclude_none=True)


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str = "USD"
    per_tokens: int = Field(default=1_000_000, gt=0)
    prices: tuple[PriceRow, ...] = ()

    def find(self, backend: str, name: str) -> PriceRow | None:
        """The row for model ``name`` served by ``backend`` (its exact name, else the name less a
        dated snapshot suffix; Gemini's ``models/`` prefix dropped); None: no price known."""
        provider = PROVIDERS.get(backend)
        if provider is None:
            return None
        name = name.removeprefix("models/")
        candidates = [name]
        stripped = _SNAPSHOT.sub("", name)
        if stripped != name:
            candidates.append(stripped)
        for candidate in candidates:
            for row in self.prices:
                if row.provider == provider and candidate in row.models:
                    return row
        return None

    def cost(self, row: PriceRow, *, prompt: int, completion: int, cached: int = 0, batch: bool = False) -> float:
        """USD of one request's tokens (``prompt`` includes ``cached``)."""
        rates: _Rates = row
        if row.long_context is not None and prompt > row.long_context.above:
            rates = row.long_context
        cached = min(max(cached, 0), prompt)
        cached_rate = rates.cached_input if rates.cached_input is not None else rates.input
        usd = ((prompt - cached) * rates.input + cached * cached_rate + completion * rates.output) / self.per_tokens
        if batch and row.batch is not None:
            usd *= row.batch
        return usd


def prices_path() -> Path:
    return data_dir("presets") / PRICES_FILE


@functools.cache
def _load(path: Path) -> PriceTable:
    return validate(PriceTable, read_yaml(path), file=path)


def load_prices(path: Path | None = None) -> PriceTable:
    """The price table (``path``, default the shipped ``models/prices.yaml``); a malformed table is
    one line naming the file and field."""
    return _load((path or prices_path()).resolve())


def unpriced_note(backend: str, name: str) -> str:
    """Why a model has no cost figure."""
    shown = f"{backend}:{name}" if name else backend
    if backend not in PROVIDERS:
        return f"{shown} runs on its own hardware: no per-token price (cost null)"
    return f"no price for {backend}:{name} in models/prices.yaml (cost null; add a row with its source and date)"
