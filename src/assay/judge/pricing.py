"""Model prices from litellm's bundled price map, read as a JSON file without importing litellm.

litellm ships ``model_prices_and_context_window_backup.json`` inside its package; this module finds the package
folder with :func:`importlib.util.find_spec` (which does not import it) and reads the file once. Prices are USD per
token. A model that is not in the map has no price (``None``: cost "unknown") unless the user gives one.

Lookup of ``provider/model``: the full string first (``openai/gpt-4o-mini``), then the part after the first slash
(``gpt-4o-mini``).
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Price", "batch_price_for", "price_for", "price_map"]

_PRICE_FILE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True)
class Price:
    """USD per prompt token and per completion token."""

    input_per_token: float
    output_per_token: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """``prompt_tokens * input + completion_tokens * output`` in USD."""
        return prompt_tokens * self.input_per_token + completion_tokens * self.output_per_token

    @classmethod
    def per_million(cls, input_usd: float, output_usd: float) -> Price:
        """A price given in USD per million tokens, as providers publish them."""
        return cls(input_usd / 1e6, output_usd / 1e6)


@functools.cache
def price_map() -> dict[str, Any]:
    """litellm's bundled price map (empty when litellm or the file is not installed)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / _PRICE_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def price_for(model: str) -> Price | None:
    """The price of ``model`` (a litellm model string), or None when the map has no usable entry."""
    return _lookup(model, "input_cost_per_token", "output_cost_per_token")


def batch_price_for(model: str) -> Price | None:
    """The price of ``model`` through the provider's batch API (the map's ``*_batches`` entries), or None."""
    return _lookup(model, "input_cost_per_token_batches", "output_cost_per_token_batches")


def _lookup(model: str, input_field: str, output_field: str) -> Price | None:
    table = price_map()
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        entry = table.get(name)
        if isinstance(entry, dict):
            cost_in, cost_out = entry.get(input_field), entry.get(output_field)
            if isinstance(cost_in, int | float) and isinstance(cost_out, int | float):
                return Price(float(cost_in), float(cost_out))
    return None
