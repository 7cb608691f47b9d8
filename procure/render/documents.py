"""The comparison and board reports: jinja2 templates rendered to HTML, then PDF by WeasyPrint.

Vendor text is data, never markup: autoescape is on, and WeasyPrint's URL fetcher serves only files
inside the templates folder (no network, no other file), so a vendor note holding `<img
src="file:///etc/passwd">` prints as text and fetches nothing. Reports are reproducible: charts are
deterministic SVG and, with SOURCE_DATE_EPOCH set, the date printed and stored is that moment.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from procure import __version__
from procure.analysis.evaluate import Evaluation
from procure.analysis.report import LazyExtras, PositionView, ReportExtras
from procure.environment import Environment, current
from procure.model.units import per_thousand
from procure.render import formats
from procure.render.charts import CHART_OFFERS
from procure.render.ranking import by_score, comparison_columns

REPORT_KINDS = ("comparison", "board")
NOTE_LIMIT = 200  # vendor notes longer than this are cut on the offer page and printed whole in the appendix


# The comparison report's chapters in order ("cover" holds the cover and the contents), and the charts each draws.
CHAPTERS = (
    "cover",
    "summary",
    "glance",
    "charts",
    "horizon",
    "robustness",
    "grades",
    "operators",
    "scorecard",
    "position",
    "benchmark",
    "plan",
    "hedging",
    "appendix",
)
CHAPTER_CHARTS = {
    "charts": ("cost_curve", "football", "breakdown", "throughput", "responsibilities"),
    "horizon": ("cash",),
    "robustness": ("ranges", "tornado"),
    "scorecard": ("scorecard",),  # one chart per signed vendor, named scorecard:OFFER-ID
    "position": ("position",),
    "benchmark": ("benchmark",),
    "plan": ("plan_frontier",),
    "hedging": ("hedge",),
}


@dataclass(frozen=True)
class Part:
    """The chapters and offer pages of the comparison report one layout shows: all of them, or one part
    of a report laid out in parts and merged (procure.render.assemble)."""

    chapters: frozenset[str] = frozenset(CHAPTERS)
    offers: tuple[int, int] | None = None  # offer pages [start, stop); None: every offer
    offers_heading: bool = True  # this part opens the "Offer details" chapter
    merged: bool = False  # laid out alone and merged: page numbers are stamped after merging

    @property
    def evaluation_only(self) -> bool:
        """Offer pages and the appendix show the evaluation alone: no market data, plan or chart."""
        return self.chapters <= {"appendix"}

    @property
    def charts(self) -> frozenset[str]:
        return frozenset(name for chapter in self.chapters for name in CHAPTER_CHARTS.get(chapter, ()))

    @property
    def style(self) -> Any:
        """CSS for a part laid out alone: no page number yet, and running headers from its first page
        unless it opens the document (the cover has none)."""
        from markupsafe import Markup

        if not self.merged:
            return Markup("")
        css = "\n@page { @bottom-right { content: none; } }"
        if "cover" not in self.chapters:
            css += (
                "\n@page :first { @top-left { content: string(doctitle); } @top-right { content: string(section); } }"
            )
        return Markup(css)


WHOLE = Part()


def templates_dir() -> Path:
    """The templates folder: inside the installed package (a wheel), else at the checkout's root."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "templates", package.parent / "templates"):
        if (candidate / "comparison.html").is_file():
            return candidate
    raise FileNotFoundError(f"report templates not found beside {package}")


# SOURCE_DATE_EPOCH up to the end of 2199, like every date procure reads (yamlsafe.LAST_YEAR).
MAX_SOURCE_DATE_EPOCH = int(datetime(2200, 1, 1, tzinfo=UTC).timestamp()) - 1


def check_source_date_epoch(environment: Environment) -> None:
    """SOURCE_DATE_EPOCH, when set, is whole seconds since 1970 up to 2199: else exit 2, named."""
    from procure.errors import InputError, Problem

    epoch = environment.source_date_epoch
    if epoch is None:
        return
    raw = epoch.strip()
    if not (raw.isascii() and raw.isdigit()):
        raise InputError(
            [Problem("SOURCE_DATE_EPOCH", None, "", f"must be whole seconds since 1970-01-01 UTC (got {epoch!r})")]
        )
    if int(raw) > MAX_SOURCE_DATE_EPOCH:
        raise InputError(
            [
                Problem(
                    "SOURCE_DATE_EPOCH",
                    None,
                    "",
                    f"must be a moment before 2200-01-01, at most {MAX_SOURCE_DATE_EPOCH} (got {raw[:40]})",
                )
            ]
        )


def report_date() -> datetime:
    """SOURCE_DATE_EPOCH when set (reproducible builds; the running command's Environment), else now."""
    epoch = current().source_date_epoch
    if epoch and epoch.strip().isascii() and epoch.strip().isdigit() and int(epoch.strip()) <= MAX_SOURCE_DATE_EPOCH:
        return datetime.fromtimestamp(int(epoch), tz=UTC)
    return datetime.now(tz=UTC)


@functools.lru_cache(maxsize=4)
def _environment(folder: Path):  # type: ignore[no-untyped-def]
    """One environment per templates folder: its compiled templates serve every part of a report."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined
    from markupsafe import Markup

    from procure.render.cashflow import demand_words
    from procure.textsafe import visible

    env = Environment(
        loader=FileSystemLoader(str(folder)),
        autoescape=True,  # every template, whatever its name: vendor text is never markup
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=visible,  # one text gate: no separator, override or control character reaches the page
    )
    env.filters.update(
        money=formats.money,
        per_task=formats.per_task,
        per_k=formats.per_thousand,
        g=formats.plain,
        cash=formats.cash,
        clip=formats.clip_html,
        breakable=formats.breakable,
        percent=formats.percent,
        number=formats.number,
        label=lambda s: str(s).replace("_", " "),
        demand_words=demand_words,
    )
    env.tests["long_text"] = lambda value: len(str(value or "")) > NOTE_LIMIT
    env.globals["NOTE_LIMIT"] = NOTE_LIMIT
    script = (folder / "sort.js").read_text(encoding="utf-8")
    env.globals["page_script"] = Markup(script)  # our own file, not vendor text
    env.globals["csp"] = content_security_policy(script)
    return env


def content_security_policy(script: str) -> str:
    """What the page may run and load: its one script, by SHA-256 (a script that escaped the escaping has another
    hash and does not run), its own inline styles, the fonts it carries as data: URIs, and nothing from outside."""
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; font-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


# Progress by stage: (what, done, total); the core reports it, the command line shows it.
Stage = Callable[[str, int | None, int | None], None]


def render_html(
    ev: Evaluation,
    kind: str = "comparison",
    charts: dict[str, str] | None = None,
    extras: ReportExtras | None = None,
    progress: Stage | None = None,
    part: Part = WHOLE,
    toc_pages: dict[str, int] | None = None,
) -> str:
    """The report as one self-contained HTML document (CSS and SVG charts inline); for the comparison,
    `part` selects what one layout shows and `toc_pages` gives the contents' page numbers once known."""
    from markupsafe import Markup

    if kind not in REPORT_KINDS:
        raise ValueError(f"unknown report kind {kind!r}")
    folder = templates_dir()
    env = _environment(folder)
    leader = ev.offer(ev.summary.recommended) if ev.summary.recommended else None
    extras = extras or ReportExtras()
    if charts is None:
        charts = build_charts(ev, kind, extras, progress, part.charts)
    offers = part.offers or (0, len(ev.offers))
    context: dict[str, Any] = {
        "ev": ev,
        "leader": leader,
        "runner": ev.offer(ev.summary.runner_up) if ev.summary.runner_up else None,
        "index_note": extras.index_note,
        "charts": {name: Markup(svg) for name, svg in charts.items()},  # our own SVG, not vendor text
        "css": Markup((folder / "report.css").read_text(encoding="utf-8")),
        "fonts": Markup((folder / "fonts.css").read_text(encoding="utf-8")),
        "version": __version__,
        "prepared": report_date().strftime("%Y-%m-%d"),
        "columns": comparison_columns(ev.currency),
        "jobs": list(ev.assumptions.jobs.items()),
        "chart_limit": CHART_OFFERS,
        "rated": [o for o in by_score(ev) if o.rating.rated],
        "position": extras.position,
        "hedge": extras.hedge,
        "hedge_missing": extras.hedge_missing,
        "benchmark": extras.benchmark,
        "benchmark_notes": extras.benchmark_notes,
        "sensitivity": extras.sensitivity,
        "plan": extras.plan,  # the procurement plan (PlanResult) when procure.yaml has demand:, else None
        "plan_summary": _plan_summary(extras),
        "plan_missing": extras.plan_missing,
        "memo": _memo(ev, extras),
        "rec": extras.recommendation,
        "reading": _reading_words(ev),
        "ask": vendor_asks(extras.recommendation, ev.currency) if extras.recommendation is not None else [],
        "football": extras.football,
        "cases": [case.name for case in extras.cases],
        "odds": extras.odds,
        "standing": extras.standing,
        "signing": _signing_words(extras.standing, ev.currency),
        "scorecard": extras.scorecard,
        "part": {
            "chapters": part.chapters,
            "offers": offers,
            "offers_heading": part.offers_heading,
            "style": part.style,
        },
        "toc_pages": toc_pages,
    }
    return env.get_template(f"{kind}.html").render(**context)


def resolve_extras(extras: LazyExtras) -> ReportExtras:
    """The extras a report shows, computed now when the report was handed the function that computes them."""
    if callable(extras):
        return extras()
    return extras or ReportExtras()


def _memo(ev: Evaluation, extras: ReportExtras) -> Any:
    """The board memo in words, from its figures (None for the comparison, which has none)."""
    if extras.memo is None:
        return None
    from procure.render.board import board_memo

    return board_memo(ev, extras.memo)


def _signing_words(standing: PositionView | None, currency: str) -> str | None:
    """Where signing the recommendation leaves us against the cheapest competitor, in one sentence."""
    s = standing.signing if standing is not None else None
    if s is None:
        return None
    where = formats.relative(s.gap)
    return (
        f"Signing {s.vendor} at {per_thousand(s.cost_per_task):.2f} {currency} per 1,000 tasks puts us {where} "
        f"the cheapest "
        f"competitor, {s.competitor}, at {per_thousand(s.competitor_cost):.2f}"
        + (f"; today we pay {per_thousand(s.today):.2f}." if s.today is not None else ".")
    )


def _reading_words(ev: Evaluation) -> str:
    from procure.render.board_words import READING_WORDS

    return READING_WORDS.get(ev.assumptions.interpolation or "", "from the measured speeds")


def vendor_asks(rec: Any, currency: str) -> list[Any]:
    from procure.render.board import vendor_asks as asks

    return asks(rec, currency)


def _plan_summary(extras: ReportExtras) -> str | None:
    if extras.plan is None or not extras.plan.plan:
        return None
    from procure.render.board_plan import plan_summary

    return plan_summary(extras.plan)


def build_charts(
    ev: Evaluation,
    kind: str,
    extras: ReportExtras | None = None,
    progress: Stage | None = None,
    only: frozenset[str] | None = None,
) -> dict[str, str]:
    """The comparison's charts, or those named in `only` (the two-page board memo has none: its figures
    are in tables)."""
    from procure.render import charts, charts_ranges, charts_time

    if kind == "board":
        if progress is not None:
            progress("drawing charts", 0, 0)  # none: the memo's figures are in tables
        return {}

    leader = ev.summary.recommended
    extras = extras or ReportExtras()
    per_task = extras.index_note["per_task"] if extras.index_note else None
    drawings: list[tuple[str, Callable[[], str]]] = [
        ("cost_curve", lambda: charts.cost_curve(ev, highlight=leader, index_per_task=per_task))
    ]
    if extras.position is not None:
        best = (leader, ev.offer(leader).metrics["cost_per_task"]) if leader else None
        drawings.append(("position", lambda: charts_time.position_history(extras.position, ev.currency, best)))  # type: ignore[arg-type]
    if (
        extras.hedge is not None and not extras.hedge.nothing_to_hedge
    ):  # nothing floating: said in words, no empty chart
        drawings.append(("hedge", lambda: charts_time.hedge_stress(extras.hedge)))  # type: ignore[arg-type]
    if ev.uncertainty is not None:
        drawings.append(("ranges", lambda: charts_ranges.cost_ranges(ev)))
    if ev.horizon_months and ev.summary.recommended:
        drawings.append(
            (
                "cash",
                lambda: charts_time.cash_flows(ev, [i for i in (ev.summary.recommended, ev.summary.runner_up) if i]),
            )
        )
    if kind == "comparison" and extras.sensitivity is not None:
        names = {o.id: o.vendor for o in ev.offers}
        drawings.append(("tornado", lambda: charts_ranges.tornado(extras.sensitivity, ev.currency, names)))  # type: ignore[arg-type]
    if kind == "comparison" and extras.benchmark is not None:
        drawings.append(
            ("benchmark", lambda: charts_time.index_history(extras.index, extras.benchmark_series, ev.currency))
        )
    if extras.plan is not None and extras.plan.frontier:
        drawings.append(("plan_frontier", lambda: charts.plan_frontier(extras.plan)))  # type: ignore[arg-type]
    if kind == "comparison" and extras.football:
        drawings.append(
            ("football", lambda: charts_ranges.football_field(extras.football, ev.currency, ev.horizon_months, leader))
        )
    if kind == "comparison" and extras.scorecard is not None:
        for i, vendor in enumerate(extras.scorecard.vendors):
            drawings.append(
                (
                    f"scorecard:{vendor.offer}",
                    lambda v=vendor, i=i: charts_time.scorecard_months(v, ev.currency, f"scorecard-{i}"),
                )
            )
    if kind == "comparison":
        drawings.append(("breakdown", lambda: charts.cost_breakdown(ev)))
        drawings.append(("throughput", lambda: charts.throughput_frontiers(ev, extras.frontiers)))
        drawings.append(("responsibilities", lambda: charts.responsibility_matrix(ev)))
    # each chart's title and description, their ids numbered in the whole report's order (unique in any part)
    vendors = {f"scorecard:{v.offer}": v.vendor for v in extras.scorecard.vendors} if extras.scorecard else {}
    keyed = [(name, draw, str(key)) for key, (name, draw) in enumerate(drawings)]
    if only is not None:
        keyed = [(name, draw, key) for name, draw, key in keyed if name.split(":")[0] in only]
    found = {}
    for done, (name, draw, key) in enumerate(keyed):
        if progress is not None:
            progress("drawing charts", done, len(keyed))
        found[name] = charts.labelled(draw(), name.split(":")[0], key, vendors.get(name, ""))
    return found


class ReportError(Exception):
    """WeasyPrint could not be loaded or failed: the message names what to install."""


def no_space(exc: BaseException | None) -> OSError | None:
    """The "no space left" (or quota) error behind `exc`, if that is what it is."""
    import errno

    seen: BaseException | None = exc
    for _ in range(20):  # a chain of causes, never a loop
        if seen is None:
            return None
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def rendering_failed(exc: BaseException) -> Exception:
    """What a failure while rendering is to the user: a full temporary folder is theirs to fix (bad
    input: exit 2, naming the folder); anything else is WeasyPrint failing (with the HTML offered)."""
    full = no_space(exc)
    if full is not None:
        import tempfile

        from procure.errors import InputError, Problem

        folder = tempfile.gettempdir()
        return InputError(
            [
                Problem(
                    folder,
                    None,
                    "",
                    f"no space left in the temporary folder ({full.strerror or full}): the PDF's fonts and pages are "
                    "laid out there; free space in it, or set TMPDIR to a folder with room, and run again",
                )
            ]
        )
    return ReportError(
        f"PDF rendering failed ({type(exc).__name__}: {exc}); --format html writes the same report without WeasyPrint"
    )


# The two steps of a layout: the HTML laid out (its page count returned, the document kept), then the kept
# document written. `html_to_pdf` takes them from elsewhere when another process lays out (procure.render.assemble).
LayoutSteps = tuple[Callable[[str], int], Callable[[], bytes]]


def html_to_pdf(html: str, progress: Stage | None = None, steps: LayoutSteps | None = None) -> bytes:
    """One document's PDF, laid out here or by `steps`; WeasyPrint failing is a ReportError that offers the HTML."""
    if steps is None:
        kept: list[Any] = []

        def here(text: str) -> int:
            kept.append(lay_out(text))
            return len(kept[0].pages)

        steps = (here, lambda: kept.pop().write_pdf())
    lay, write = steps
    try:
        if progress is not None:
            progress("laying out pages", None, None)
        # lay_out() then write_pdf() is what HTML.write_pdf() does, in two steps so pages can be counted
        pages = lay(html)
        if progress is not None:
            progress(f"writing {pages} pages", None, None)
        return write()
    except ReportError:
        raise
    except Exception as exc:  # WeasyPrint, Pango or a font failing: say so, and offer the HTML instead
        raise rendering_failed(exc) from None


def weasyprint() -> Any:
    """The WeasyPrint module, or a ReportError that names what to install."""
    try:
        import weasyprint as module
    except (ImportError, OSError) as exc:  # OSError: the Pango library is missing
        raise ReportError(
            f"PDF output needs WeasyPrint and the Pango library ({exc}). Install them with "
            "`pip install weasyprint` and `apt-get install libpango-1.0-0 libpangoft2-1.0-0`, "
            "or use --format html."
        ) from None
    return module


def lay_out(html: str, fonts: Any = None) -> Any:
    """WeasyPrint's laid-out document, fetching nothing but files of the templates folder; `fonts` (a
    FontConfiguration) serves several documents with the report's fonts loaded once."""
    folder = templates_dir()
    return (
        weasyprint()
        .HTML(string=html, base_url=folder.as_uri() + "/", url_fetcher=_restricted_fetcher(folder))
        .render(font_config=fonts)
    )


def _restricted_fetcher(folder: Path):  # type: ignore[no-untyped-def]
    from urllib.parse import unquote, urlsplit

    from weasyprint.urls import URLFetcher

    root = folder.resolve()

    class TemplatesOnlyFetcher(URLFetcher):
        """Serves files from the templates folder and fonts given as data: URIs (a page written with --format html
        carries its fonts so: procure.render.webfonts) and nothing else: no network, no other file."""

        def fetch(self, url: str, headers: Any = None) -> Any:
            parts = urlsplit(url)
            if parts.scheme == "data" and parts.path.startswith("font/"):  # its bytes are in the URI: nothing read
                return super().fetch(url, headers)
            if parts.scheme == "file":
                path = Path(unquote(parts.path)).resolve()
                if path.is_relative_to(root) and path.is_file():
                    return super().fetch(url, headers)
            raise ValueError(f"blocked: reports load nothing outside the templates folder ({url[:80]})")

    return TemplatesOnlyFetcher(allowed_protocols=["file", "data"], allow_redirects=False)
