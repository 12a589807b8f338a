#!/usr/bin/env python3
"""One table over every language's side-by-side benchmark (benchmarks/peers.sh).

Reads the logs of the languages' run.sh scripts (each ends with a ``JSON:`` line and one JSON
document) and prints, per language and workload, our figure, the best peer's (the fastest
installable SDK of that language) and the ratio peer ÷ ours (above 1: ours is faster). For
Ruby, PHP and C#, which have no installable peer, the comparison is the host's floor (bare
threads / Fibers / Tasks doing the same trivial work): the ratio floor ÷ ours is below 1 by
construction and the column ``ours − floor`` is the SDK's own cost.

    python3 benchmarks/peers_table.py [--check] LOG...    (LOG named <language>.log)

With ``--check`` the exit status is 1 when a fan-out or sequential ratio against the best
peer is below 1, or when a language's log has no result.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

UNITS = {"empty": "ms wall", "fanout": "µs/call", "sequential": "µs/turn", "sleepy": "ms wall"}
ORDER = ["empty", "fanout", "fanout (def tools)", "fanout (async def tools)", "sequential", "sleepy"]
GUARDED = ("fanout", "sequential")
FLOOR = "floor"

# Python's and Node's workload names in their benches -> the common names.
ALIASES = {
    "python": {"empty": "empty", "fanout_def": "fanout (def tools)", "fanout_async": "fanout (async def tools)",
               "seq_200": "sequential", "sleepy": "sleepy"},
    "node": {"empty": "empty", "fanout": "fanout", "seq_200": "sequential", "sleepy": "sleepy"},
}
LABELS = {"python": "Python", "node": "Node", "go": "Go", "java": "Java", "ruby": "Ruby", "php": "PHP",
          "csharp": "C#"}
# Our other APIs that a language's run measures beside "ours", by SDK name: the label of their rows.
OTHER_APIS = {"ours-kotlin": "Kotlin"}


def document(path: str) -> Optional[Dict[str, Any]]:
    """The JSON document after the last ``JSON:`` line of a log, or None."""
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return None
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() == "JSON:" and i + 1 < len(lines):
            try:
                return json.loads(lines[i + 1])
            except json.JSONDecodeError:
                return None
    return None


def figures(language: str, doc: Dict[str, Any]) -> Dict[str, Dict[str, float]]:
    """figures[sdk][workload] in the common workload names and units."""
    if "figures" in doc:
        return {sdk: {w: float(v) for w, v in wl.items()} for sdk, wl in doc["figures"].items()}
    out: Dict[str, Dict[str, float]] = {}
    for name, by_sdk in doc.get("results", {}).items():
        common = ALIASES.get(language, {}).get(name)
        if common is None:
            continue
        for sdk, r in by_sdk.items():
            if isinstance(r, dict) and ("per_call_us" in r or "median_ms" in r):
                out.setdefault(sdk, {})[common] = float(r.get("per_call_us", r.get("median_ms")))
    return out


def load(doc: Dict[str, Any]) -> str:
    """The 1-minute load average before and after the language's run."""
    meta = doc.get("meta", doc)

    def first(v: Any) -> str:
        if isinstance(v, str):
            v = v.split()
        return f"{float(v[0]):.2f}" if v else "?"

    return f"{first(meta.get('load_before'))} → {first(meta.get('load_after'))}"


def fmt(v: Optional[float]) -> str:
    if v is None:
        return "–"
    a = abs(v)
    return f"{v:,.0f}" if a >= 100 else (f"{v:.1f}" if a >= 10 else f"{v:.2f}")


def unit(workload: str) -> str:
    return UNITS.get(workload.split(" ")[0], "")


def rows_of(language: str, doc: Dict[str, Any]) -> Tuple[List[List[str]], List[str]]:
    figs = figures(language, doc)
    peers = {sdk: f for sdk, f in figs.items() if sdk != "ours" and sdk not in OTHER_APIS}
    rows, failures = [], []
    for sdk in ["ours"] + [s for s in OTHER_APIS if s in figs]:
        label = OTHER_APIS.get(sdk, LABELS.get(language, language))
        ours = figs.get(sdk, {})
        for w in sorted(ours, key=lambda x: ORDER.index(x) if x in ORDER else len(ORDER)):
            o = ours[w]
            candidates = [(f[w], p) for p, f in peers.items() if w in f]
            if not candidates:
                continue
            best, who = min(candidates)
            ratio = best / o if o > 0 else None
            overhead = fmt(o - best) if who == FLOOR else ""
            rows.append([label, w, unit(w), fmt(o), who, fmt(best),
                         "–" if ratio is None or (who == FLOOR and w == "empty") else f"{fmt(ratio)}×",
                         overhead, load(doc)])
            if who != FLOOR and w.split(" ")[0] in GUARDED and ratio is not None and ratio < 1:
                failures.append(f"{label} {w}: best peer ({who}) {fmt(best)} ÷ ours {fmt(o)} = {fmt(ratio)}×")
    return rows, failures


def main(argv: List[str]) -> int:
    check = "--check" in argv
    logs = [a for a in argv if a != "--check"]
    header = ["language", "workload", "unit", "ours", "best peer / floor", "its figure", "peer ÷ ours",
              "ours − floor", "load (1 min) before → after"]
    rows: List[List[str]] = [header]
    failures: List[str] = []
    for path in logs:
        language = os.path.basename(path).rsplit(".", 1)[0]
        doc = document(path)
        if doc is None:
            failures.append(f"{LABELS.get(language, language)}: no result in {path}")
            rows.append([LABELS.get(language, language), "(no result: see the log)", "", "", "", "", "", "", ""])
            continue
        r, f = rows_of(language, doc)
        rows.extend(r)
        failures.extend(f)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    print()
    print("Every language side by side (ratio = best peer ÷ ours, or floor ÷ ours; above 1: ours is faster)")
    for j, r in enumerate(rows):
        print("  ".join(c.ljust(widths[i]) if i in (0, 1, 2, 4) else c.rjust(widths[i]) for i, c in enumerate(r)))
        if j == 0:
            print("  ".join("-" * w for w in widths))
    if check:
        print()
        if failures:
            print("bench-check FAILED: " + "; ".join(failures))
            return 1
        print("bench-check: fan-out and sequential ahead of the best peer in every language that has one")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
