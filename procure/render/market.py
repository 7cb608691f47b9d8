"""The rental price benchmark (index build) as text: the index, its methodology and its strata as
terminal tables, JSON, CSV (readable as market/index.csv) and Markdown. They format; they never compute."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from procure.render.formats import markdown_table, md_cell, money, percent
from procure.textsafe import csv_writer

if TYPE_CHECKING:
    from rich.console import Group
    from rich.table import Table

    from procure.analysis.market import IndexBuild


def index_csv(build: IndexBuild) -> str:
    """The built index: period (first day), level, observations; readable as market/index.csv."""
    buffer = io.StringIO()
    for words in build.splices:  # a level not built from the quotes says so in the file itself
        buffer.write("# spliced: " + " ".join(words.split()) + "\n")
    writer = csv_writer(buffer)
    writer.writerow(["period", "level", "observations"])
    for point in build.points:
        if point.level is not None:
            writer.writerow([point.period, f"{point.level:.4f}", point.observations])
    return buffer.getvalue()


def methodology_rows(build: IndexBuild) -> tuple[list[str], list[list[str]]]:
    headers = ["Method", "Scope", "Advertised", "Transacted", "All", "Spread (adv. - trans.)"]
    rows = [
        [r.method, r.scope, money(r.advertised, 3), money(r.transacted, 3), money(r.all, 3), money(r.spread, 3)]
        for r in build.methodology
    ]
    return headers, rows


def methodology_caption(build: IndexBuild) -> str:
    filters = ", ".join(
        f
        for f in (
            f"gpu {build.gpu}",
            f"term {build.term} months" if build.term else "",
            f"grade {build.grade}" if build.grade else "",
        )
        if f
    )
    return f"Methodology: the {build.period} of {build.methodology_period} under each choice ({filters}); per GPU-hour"


def methodology_table(build: IndexBuild) -> Table:
    from rich.table import Table

    headers, rows = methodology_rows(build)
    table = Table(title=methodology_caption(build), header_style="bold")
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if i >= 2 else "left")
    for row in rows:
        table.add_row(*row)
    return table


def strata_rows(build: IndexBuild) -> tuple[list[str], list[list[str]]]:
    headers = ["Term", "Kind", "Grade", "Weight", "Quotes", "Sellers", "Level", "Status"]
    rows = [
        [r.term, r.kind, r.grade, percent(r.weight, 1), str(r.quotes), str(r.sellers), money(r.level, 3), r.status]
        for r in build.strata
    ]
    return headers, rows


def strata_table(build: IndexBuild) -> Table:
    from rich.table import Table

    headers, rows = strata_rows(build)
    table = Table(
        title=f"Strata in the {build.period} of {build.methodology_period} (fixed weights: {build.weights_source})",
        header_style="bold",
    )
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if 3 <= i <= 6 else "left")
    for row in rows:
        table.add_row(*row)
    return table


def _index_flag(point) -> str:  # type: ignore[no-untyped-def]
    """What a level is besides a plain build: a spliced reading (with the quotes' level), carried or thin."""
    if point.spliced:
        built = f"; quotes {point.spliced_from:.2f}" if point.spliced_from else ""
        return f" (spliced: {point.source}{built})"
    return " (carried)" if point.carried else (" (thin)" if point.thin else "")


def index_table(build: IndexBuild) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    scope = ", scope-adjusted" if build.scope_adjust else ""
    table = Table(title=f"Index: {build.method}, {build.kind} prices{scope}, by {build.period}", header_style="bold")
    for title in ("Period", "Level", "Observations", "Strata own / carried / none"):
        table.add_column(title, justify="right")
    for point in build.points:
        flag = _index_flag(point)
        table.add_row(
            str(point.period),
            money(point.level, 3) + flag,
            str(point.observations),
            f"{point.strata_own} / {point.strata_carried} / {point.strata_missing}",
        )
    return Group(
        table,
        methodology_table(build),
        strata_table(build),
        Text("\n".join([f"rule: {r}" for r in build.rules] + [f"note: {n}" for n in build.notes])),
    )


def index_text(build: IndexBuild, fmt: str) -> str:
    if fmt == "json":
        return build.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        rows = [[str(p.period), money(p.level, 3) + _index_flag(p), str(p.observations)] for p in build.points]
        headers, method_rows = methodology_rows(build)
        strata_headers, strata_body = strata_rows(build)
        return (
            f"# Index: {build.method}, {build.kind} prices{', scope-adjusted' if build.scope_adjust else ''}, by "
            f"{build.period}\n\n"
            + markdown_table(["Period", "Level", "Observations"], rows, right={1, 2})
            + f"\n\n{md_cell(methodology_caption(build))}\n\n"
            + markdown_table(headers, method_rows, right={2, 3, 4, 5})
            + f"\n\nStrata (fixed weights: {build.weights_source})\n\n"
            + markdown_table(strata_headers, strata_body, right={3, 4, 5, 6})
            + "\n\n"
            + "\n".join(f"- {md_cell(r)}" for r in build.rules)
            + "\n"
            + "".join(f"\nnote: {md_cell(n)}" for n in build.notes)
            + ("\n" if build.notes else "")
        )
    return index_csv(build)
