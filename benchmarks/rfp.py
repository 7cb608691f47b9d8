"""RFP-like markets for benchmarks and tests: a workspace's own offers (the example's 12 by default: managed clusters,
bare metal, managed serving, index-linked, per-token, owned and ramped offers, one held contract) plus near-copies of
them, as a request for proposals returns them: the same terms from other vendors, each copy's prices x U(0.85, 1.15)
(seeded), copies unsigned. `spread=0` gives exact copies (the example cycled); `keep_signed` keeps each copy's signed
contract, so that every copy of a held offer is held too.

    python benchmarks/rfp.py DIR --offers 1000 [--source tests/data/real_offers] [--seed 7]
"""

from __future__ import annotations

import argparse
import copy
import random
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

# The money figures of an offer's pricing block that a copy scales (every amount and price, never a count, a share,
# a term or a physical figure): rent, per-token prices, burst and tier prices, fees, the index link's spread, floor
# and cap, an owned cluster's capital, electricity and colocation.
MONEY = {"gpu_hour", "input", "output", "once", "monthly", "per_tb", "spread", "floor", "cap"}
OWNED_MONEY = {"capex_per_gpu", "electricity_kwh", "colo_kw_month"}


def scaled(pricing: dict, factor: float) -> dict:
    """A copy of a pricing block with every money figure times `factor` (rounded to the cent, or to 0.1 mills for a
    per-token price)."""

    def walk(node: object, key: str | None, owned: bool) -> object:
        if isinstance(node, dict):
            return {k: walk(v, k, owned or k == "owned") for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, key, owned) for v in node]
        if isinstance(node, bool) or not isinstance(node, (int, float)):
            return node
        if key in MONEY or (owned and key in OWNED_MONEY):
            return round(node * factor, 4)
        return node

    return walk(pricing, None, False)  # type: ignore[return-value]


def make_market(
    target: Path,
    count: int,
    source: Path = ROOT,
    seed: int = 7,
    spread: float = 0.15,
    keep_signed: bool = False,
) -> Path:
    """Write into `target` (replaced if present) the workspace `source` with `count` offers: its own, then near-copies
    of them in turn until `count`. Each copy has its own id and vendor; its prices are the original's x U(1 - spread,
    1 + spread)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copy(source / "procure.yaml", target / "procure.yaml")
    for folder in ("grades", "performance", "market", "actuals"):
        if (source / folder).is_dir():
            shutil.copytree(source / folder, target / folder)
    offers = target / "offers"
    offers.mkdir()
    originals = []
    for path in sorted((source / "offers").glob("*.yaml")):
        shutil.copy(path, offers / path.name)
        originals.append(yaml.safe_load(path.read_text()))
    rng = random.Random(seed)
    for i in range(count - len(originals)):
        data = copy.deepcopy(originals[i % len(originals)])
        factor = rng.uniform(1 - spread, 1 + spread) if spread else 1.0
        data["id"] = f"{data['id']}-r{i + 1:05d}"
        data["vendor"] = f"{data['vendor']} (bidder {i + 1:05d})"
        data["pricing"] = scaled(data["pricing"], factor)
        if not keep_signed and isinstance(data.get("contract"), dict):
            data["contract"].pop("signed", None)
        (offers / f"{data['id']}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--offers", type=int, default=1000)
    parser.add_argument("--source", type=Path, default=ROOT)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--spread", type=float, default=0.15)
    parser.add_argument("--keep-signed", action="store_true")
    args = parser.parse_args()
    make_market(args.dir, args.offers, args.source, args.seed, args.spread, args.keep_signed)


if __name__ == "__main__":
    main()
