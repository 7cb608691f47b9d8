"""One recommendation on every surface: computed once (procure/analysis/decision.py), read by compare, plan,
hedge, the comparison report and the board memo. The figures are worked out by hand in
tests/decisionws.py."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import decisionws
import pypdf
import pytest
from clihelp import header_cells, html_words, run

from procure.analysis.decision import decide
from procure.analysis.recommendation import AskLine, gpus_words, merge_lines, months_words

AS_OF = "2026-12-01"
# The plan of tests/decisionws.py: (vendor, GPUs, first month, last month)
ASK = {("Alpha Compute", 100, 1, 12), ("Bravo Cloud", 100, None, None)}
PER_K = 550 / 162_000 * 1000  # 3.3951 USD per 1,000 tasks
BEST_SINGLE_PER_K = 5.0 / 1080 * 1000  # Bravo alone, 4.6296
JARGON = ("index-linked", "basis", "ladder", "pay-as-used", "interpolation")


def _line(first: int, gpus: int = 8, offer: str = "a", price: float = 2.0, term: int = 1) -> AskLine:
    return AskLine(
        offer=offer,
        vendor=f"Vendor {offer}",
        role="commit",
        gpus=gpus,
        first_month=first,
        last_month=first + term - 1,
        term_months=term,
        price=price,
        price_unit="gpu_hour",
        commitment=price * gpus * 730 * term,
        valid_until=date(2027, 6, 30),
    )


def test_consecutive_one_month_blocks_are_one_line():
    """Months 5, 6 and 7 of one offer at one price are one line 'months 5–7', their commitments summed; a gap,
    another price or a longer term starts a new line."""
    merged = merge_lines([_line(5), _line(6, gpus=16), _line(7), _line(9), _line(10, price=2.5), _line(11, term=12)])
    assert [(x.first_month, x.last_month, x.commitments) for x in merged] == [
        (5, 7, 3),
        (9, 9, 1),
        (10, 10, 1),
        (11, 22, 1),
    ]
    assert merged[0].commitment == pytest.approx(2.0 * 730 * (8 + 16 + 8))
    assert (gpus_words(merged[0]), months_words(merged[0])) == ("8–16 GPUs", "months 5–7")
    assert months_words(merged[1]) == "month 9"  # never "months 9-9"
    assert gpus_words(_line(1, gpus=1)) == "1 GPU"  # never "1 GPUs"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decisionws.write(tmp_path_factory.mktemp("decision"))


def test_the_recommendation_is_the_plan_with_its_figures(workspace: Path):
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.analysis.plan import make_plan
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    ev, inputs = evaluate_with_inputs(ws, date(2026, 12, 1))
    rec = decide(ev, make_plan(ws, ev.as_of, evaluation=(ev, inputs)))
    assert rec.kind == "plan"
    assert {(x.vendor, x.gpus, x.first_month, x.last_month) for x in rec.lines} == ASK
    assert rec.cost_per_1000_tasks == pytest.approx(PER_K, rel=1e-6)
    assert (rec.best_single.vendor, rec.best_single.cost_per_1000_tasks) == (
        "Bravo Cloud",
        pytest.approx(BEST_SINGLE_PER_K, rel=1e-6),
    )
    assert rec.saving_share == pytest.approx(1 - 550 / 750, rel=1e-6)
    assert rec.total_spend == pytest.approx(550 * 730 * 12, rel=1e-6) and rec.spend_per_year == pytest.approx(
        550 * 730 * 12, rel=1e-6
    )
    assert rec.commitment_by_vendor == {"Alpha Compute": pytest.approx(2_628_000)}
    # Alpha states no delivery: the plan counts on it from the as-of date, before its valid_until (2027-03-31)
    assert rec.deadline == date(2026, 12, 1)
    assert rec.deadline_reason == "the last day to sign for the 100 GPUs of Alpha Compute to start on 1 December 2026"
    # Without demand the ranking's leader is the recommendation and the best single offer, at today's demand.
    single = decide(ev)
    assert (single.kind, single.offer, single.best_single.offer) == ("offer", "alpha", "alpha")
    assert single.basis.startswith("at today's stated demand")


def _pdf(path: Path) -> tuple[int, str]:
    reader = pypdf.PdfReader(str(path))
    return len(reader.pages), " ".join(" ".join(page.extract_text() for page in reader.pages).split())


@pytest.fixture(scope="module")
def surfaces(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("surfaces")
    compare = run("compare", "-w", workspace, "--as-of", AS_OF, "--format", "json")
    plan = run("plan", "-w", workspace, "--as-of", AS_OF, "--format", "json")
    table = run("compare", "-w", workspace, "--as-of", AS_OF)
    hedge = run("hedge", "-w", workspace, "--as-of", AS_OF, "--format", "json")
    for result in (compare, plan, table, hedge):
        assert result.exit_code == 0, result.output
    found: dict[str, object] = {
        "compare": json.loads(compare.stdout),
        "plan": json.loads(plan.stdout),
        "table": table.stdout,
        "hedge": json.loads(hedge.stdout),
    }
    # The comparison's words are read from its HTML (the same document, not laid out); the board memo's from its
    # PDF, whose pages are counted.
    for kind, name in (("comparison", "comparison.html"), ("board", "board.pdf")):
        target = out / name
        result = run(
            "report", *(["--board"] if kind == "board" else []), "-w", workspace, "--as-of", AS_OF, "--out", target
        )
        assert result.exit_code == 0, result.output
        found[kind] = _pdf(target) if name.endswith(".pdf") else (None, html_words(target.read_text(encoding="utf-8")))
    return found


@pytest.mark.slow
def test_every_surface_recommends_the_same_vendors_gpus_months_and_cost(surfaces: dict[str, object]):
    """compare --format json, plan --format json, the terminal's first line, the comparison report and the board PDF."""
    rec = surfaces["compare"]["recommendation"]  # type: ignore[index]
    assert rec["kind"] == "plan"
    assert {(x["vendor"], x["gpus"], x["first_month"], x["last_month"]) for x in rec["lines"]} == ASK
    assert rec["cost_per_task"] == pytest.approx(PER_K / 1000, rel=1e-6) and rec[
        "cost_per_1000_tasks"
    ] == pytest.approx(PER_K, rel=1e-6)
    plan = surfaces["plan"]
    assert {(x["vendor"], x["gpus"], x["start_month"], x["end_month"]) for x in plan["plan"]} == ASK  # type: ignore[index]
    assert plan["expected_cost_per_task"] == pytest.approx(rec["cost_per_task"], rel=1e-12)  # type: ignore[index]
    assert plan["single_best"]["offer"] == rec["best_single"]["offer"] == "bravo"  # type: ignore[index]
    first = " ".join(
        str(surfaces["table"]).split("\n\n")[0].split()
    )  # the line as read, wherever the terminal wraps it
    assert first.startswith(
        "Recommended: the plan (Alpha Compute: 100 GPUs, months 1–12, 3.00 USD per GPU-hour; Bravo Cloud: up to 100 "
        "GPUs on demand"
    )
    assert "at 3.40 USD per 1,000 tasks" in first and "best single offer Bravo Cloud at 4.63" in first
    for kind in ("comparison", "board"):
        _, text = surfaces[kind]  # type: ignore[misc]
        assert "Alpha Compute, commitment 2.63 M USD: 100 GPUs, months 1–12, 3.00 USD per GPU-hour" in text, kind
        assert "Bravo Cloud: up to 100 GPUs on demand, any month, 5.00 USD per GPU-hour" in text, kind
        assert "3.40 USD per 1,000 tasks" in text, kind
        assert "26.7% below the best single offer" in text, kind
        assert "4.82 M USD over 12 months" in text, kind


@pytest.mark.slow
def test_both_reports_and_hedge_buy_the_same_contracts_for_the_same_months(surfaces: dict[str, object]):
    """263 contracts for months 1-12 (113 + 75 + 75, tests/decisionws.py): the hedge command's ladder, the comparison's
    hedging chapter and the board's question."""
    hedge = surfaces["hedge"]
    assert hedge["offer"] == "plan"  # type: ignore[index]
    assert [(r["first_month"], r["last_month"], r["contracts"]) for r in hedge["ladder"]] == [
        (1, 3, 113),
        (4, 6, 75),
        (7, 12, 75),
    ]  # type: ignore[index]
    _, comparison = surfaces["comparison"]  # type: ignore[misc]
    chapter = comparison[comparison.index("Hedging the procurement plan") :]
    rows = re.findall(r"(\d+)-(\d+) ([\d,]+) (\d+)% ([\d,]+) (\d+) ([\d,]+)", chapter)
    assert [(int(a), int(b), int(n)) for a, b, _, _, _, n, _ in rows[:3]] == [(1, 3, 113), (4, 6, 75), (7, 12, 75)]
    _, board = surfaces["board"]  # type: ignore[misc]
    assert "Approve buying 263 GPU-hour price contracts (192 k GPU-hours) for months 1–12" in board


@pytest.mark.slow
def test_the_board_memo_is_two_pages_with_deadline_spend_and_no_jargon(surfaces: dict[str, object]):
    pages, text = surfaces["board"]  # type: ignore[misc]
    assert pages == 2
    # Alpha states no delivery date: the plan counts on its GPUs from the as-of date, before its offer expires
    # (2027-03-31)
    assert (
        "Decide by 1 December 2026: the last day to sign for the 100 GPUs of Alpha Compute to start on 1 December 2026."
        in text
    )
    assert "Expected spend 4.82 M USD over 12 months, 4.82 M USD a year" in text
    for word in JARGON:
        assert word not in text.lower(), word


@pytest.mark.slow
def test_a_plan_that_cannot_be_solved_is_said_on_page_one_and_the_offer_is_the_fallback(tmp_path: Path):
    """No vendor may hold more than 40% of the capacity, and there are two vendors: no plan. The memo says so on
    page 1 with the reason, the command warns, and the best offer at today's demand (Alpha, 100 GPUs billed) is asked
    for instead. (Demand beyond every offer is not a reason: it is planned, its shortfall priced.)"""
    root = decisionws.write(tmp_path / "ws", vendor_share=0.4)
    target = tmp_path / "board.pdf"
    result = run("report", "--board", "-w", root, "--as-of", AS_OF, "--out", target)
    assert result.exit_code == 0, result.output
    assert "warning: the purchase plan could not be solved" in result.stderr
    reader = pypdf.PdfReader(str(target))
    assert len(reader.pages) == 2
    first = " ".join(reader.pages[0].extract_text().split())
    assert first.startswith("DECISION MEMO")
    assert "The purchase plan could not be solved, so the best single offer is asked for instead" in first
    assert "0.4 x 2 usable vendors is below 1: no split can serve the demand" in first
    assert "Alpha Compute: 100 GPUs, months 1–12, 3.00 USD per GPU-hour" in first
    assert "Decide by 31 March 2027: the offer of Alpha Compute expires then." in first
    # The fallback's spend: 100 GPUs x 3.00 x 730 hours x 12 months = 2,628,000 (no fees, no staff: tests/planws.py)
    assert "Expected spend 2.63 M USD over 12 months, 2.63 M USD a year" in first
    text = " ".join(" ".join(page.extract_text() for page in reader.pages).split()).lower()
    assert [w for w in JARGON if w in text] == []
    compare = run("compare", "-w", root, "--as-of", AS_OF, "--format", "json")
    assert compare.exit_code == 0 and "warning: the purchase plan could not be solved" in compare.stderr
    rec = json.loads(compare.stdout)["recommendation"]
    assert (rec["kind"], rec["offer"]) == ("offer", "alpha") and "below 1" in rec["plan_failed"]


@pytest.mark.slow
def test_a_workspace_without_transacted_prices_gets_the_benchmark_with_a_note(data_dir: Path, tmp_path: Path):
    """No public B200 transacted prices exist: the chapter is built from the advertised ones and says what is
    missing."""
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(data_dir / "market_ws", root)
    quotes = root / "market" / "quotes.csv"
    quotes.write_text(
        "".join(line for line in quotes.read_text().splitlines(keepends=True) if ",transacted," not in line)
    )
    target = tmp_path / "comparison.html"
    result = run("report", "--format", "html", "-w", root, "--as-of", AS_OF, "--out", target)
    assert result.exit_code == 0, result.output
    html = target.read_text()
    assert "Rental price benchmark" in html
    assert "no transacted prices in market/quotes.csv on or before 2026-12-01: that series is left out" in html


def test_compare_horizon_shows_its_columns_in_the_table_and_markdown(data_dir: Path):
    """compare --horizon 24 without --rank-by horizon: the horizon's cost per task and commitment are shown."""
    for args in ((), ("--format", "markdown")):
        result = (
            run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, "--horizon", "24", "--wide", *args)
            if not args
            else run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, "--horizon", "24", *args)
        )
        assert result.exit_code == 0, result.output
        shown = header_cells(result.stdout) if not args else result.stdout
        assert "USD/1k tasks 24 mo" in shown and "Commit USD" in shown, args


def test_a_failing_offer_shows_its_root_cause_first():
    """Quarry's monitoring is not isolated between tenants: a critical failure, which puts its reliability in the
    lowest band and so its availability below the minimum. The shown (first) reason is the security failure; the
    availability reason names its cause."""
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    quarry = evaluate(load_workspace(Path(__file__).parent.parent), date(2026, 11, 29)).offer("quarry-b200-mc")
    assert quarry.reasons[0] == "security: monitoring is not isolated between tenants"
    availability = next(r for r in quarry.reasons if r.startswith("stated availability"))
    assert availability.endswith("(the lowest reliability band: critical failure monitoring.tenant_isolated: not met)")


def test_plan_without_demand_names_the_same_recommendation_as_compare(data_dir: Path):
    # tests/data/real_offers has no demand: section, so the recommendation is the single best offer;
    # `plan` still solves over default scenarios but must not call that plan the recommendation.
    ws = data_dir / "real_offers"

    def first_sentence(*args: str) -> str:
        result = run(*args, "-w", ws)
        assert result.exit_code == 0, result.stderr
        words = " ".join(result.stdout.split())  # the first line wraps at the terminal width
        return words[: words.index("it is the best single offer.") + len("it is the best single offer.")]

    compared = first_sentence("compare")
    assert compared.startswith("Recommended: the single offer (Nebius")
    assert first_sentence("plan") == compared
    planned = " ".join(run("plan", "-w", ws).stdout.split())
    assert "so it is not the recommendation; state demand: to make it one." in planned


def test_a_single_offer_billed_above_its_minimum_says_how_many_gpus_it_commits(data_dir: Path, tmp_path: Path):
    """tests/data/real_offers with Nebius billed by the month (its file says by the hour: pay-as-used,
    tests/test_hourly_billed.py): the demand bills 39 Nebius GPUs (20 M tasks over 730 h x its 710.5 successful tasks a
    GPU-hour, test_evaluate's capacity at the means of availability and utilization: 38.56, whole GPUs), the contract
    commits its minimum of 32 for 12 months (the other 7 are billed as used). The ask says both, and the commitment
    prices the 32: 7.15 USD x 32 GPUs x 730 h x 12 months = 2,004,288 USD."""
    import shutil

    from procure.analysis.evaluate import evaluate
    from procure.analysis.memo import memo_figures
    from procure.io.workspace import load_workspace
    from procure.render.board import board_memo

    root = tmp_path / "real_offers"
    shutil.copytree(data_dir / "real_offers", root)
    nebius = root / "offers" / "nebius-b200.yaml"
    nebius.write_text(nebius.read_text(encoding="utf-8").replace("billed_per: hour", "billed_per: month"))
    ev = evaluate(load_workspace(root), date(2026, 11, 29))
    line = decide(ev).lines[0]
    assert (line.vendor, line.gpus, line.gpus_committed) == ("Nebius", 39, 32)
    assert line.commitment == pytest.approx(7.15 * 32 * 730 * 12)
    assert gpus_words(line) == "39 GPUs (32 committed)"
    # the memo's headline asks for the 32 the 2.00 M commits, and says what today's demand bills
    headline = board_memo(ev, memo_figures(ev, [], None, None, "", None)).headline
    assert headline.startswith(
        "Approve a 12-month commitment of 32 B200 GPUs with Nebius, 2.00 M USD (39 GPUs billed at today's demand), at "
    )
    # where the demand bills no more than the minimum there is nothing to add
    assert gpus_words(_line(1, gpus=32)) == "32 GPUs"
    result = run("compare", "-w", root, "--as-of", AS_OF)
    assert "39 GPUs (32 committed)" in " ".join(result.stdout.split())


# --- the offer ranked first, used less than it could be; a plan dearer than the best single offer -----------------


def _two_offers(tmp_path: Path, burst_price: float, cap: float) -> Path:
    import planws

    cfg = planws.config(plan={"max_vendor_share": cap, "mip_gap": 0.0})
    offers = [
        planws.offer("alpha", vendor="Alpha Compute", gpus=0, max_gpus=200, gpu_hour=3.0, term_months=12),
        planws.offer(
            "bravo", vendor="Bravo Cloud", gpus=0, burst={"gpu_hour": burst_price, "max_gpus": 300}, term_months=1
        ),
    ]
    return planws.write(tmp_path / "ws", cfg, offers)


def test_the_offer_ranked_first_and_used_less_than_it_could_gets_a_line_saying_why(tmp_path: Path):
    """Alpha (3.00, up to 200 GPUs, 12 months) is ranked first at today's 100 GPUs of demand. The plan commits 100
    and buys the high path's other 100 from Bravo on demand at 5.00: a 101st committed GPU costs 3.00 every hour and
    saves 5.00 only half the time. Alone, Alpha must commit 200 GPUs for the high path: 600 an hour for 0.5 x 108,000
    + 0.5 x 216,000 = 162,000 tasks, 3.7037 per 1,000 (the best single offer; Bravo alone is 4.6296)."""
    ws = _two_offers(tmp_path, 5.0, 1.0)
    result = run("compare", "-w", ws, "--as-of", AS_OF, "--format", "json")
    assert result.exit_code == 0, result.stderr
    rec = json.loads(result.stdout)["recommendation"]
    assert rec["best_single"]["vendor"] == "Alpha Compute" and rec["best_single"][
        "cost_per_task"
    ] * 1000 == pytest.approx(600 / 162_000 * 1000)
    assert rec["usage"] == [
        "Alpha Compute (ranked first at today's demand): committed now for months 1–12 of 12, 100 of up to 200 GPUs; "
        "alone it costs 3.70 per 1,000 "
        "tasks over the scenarios; what can limit it: 12-month term, no on-demand capacity of its own."
    ]
    # the first line stays short; the usage line follows the ranking (compare) and sits in the JSON beside it
    assert rec["usage"][0] not in rec["headline"] and rec["dearer_why"] is None


def test_a_plan_dearer_than_the_best_single_offer_says_why_in_compare(tmp_path: Path):
    """On demand at 9.00, Alpha alone (200 GPUs committed, 3.7037 per 1,000 tasks) is the cheapest plan; a cap of 60%
    per vendor forces at least 40% of the tasks onto Bravo at 9.00 / 1,080 = 8.33 per 1,000, so the plan costs more
    than the best single offer, and compare's first line says which policy makes it so."""
    ws = _two_offers(tmp_path, 9.0, 0.6)
    result = run("compare", "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr
    first = " ".join(result.stdout.split("\n\n")[0].split())
    assert "best single offer Alpha Compute at 3.70, so the plan costs" in first
    assert re.search(
        r"costs [0-9.]+% more because no vendor may provide more than 60% of the capacity \(plan\.max_vendor_share\)",
        first,
    ), first


def test_the_memo_says_why_a_plan_costs_more_than_the_best_single_offer(tmp_path: Path):
    from procure.analysis.decision import recommend
    from procure.analysis.evaluate import evaluate
    from procure.analysis.memo import memo_figures
    from procure.io.workspace import load_workspace
    from procure.render.board import cost_words

    ws = load_workspace(_two_offers(tmp_path, 9.0, 0.6))
    ev = evaluate(ws, date.fromisoformat(AS_OF))
    rec, plan = recommend(ws, ev)
    assert rec.saving_share is not None and rec.saving_share < 0
    figures = memo_figures(ev, [], None, None, "", plan, rec)
    # the plan's expected cost per task above the best single offer's, a month at the plan's expected tasks
    gap = rec.best_single.cost_per_task - rec.cost_per_task
    assert figures.cost.gap == pytest.approx(gap) and gap < 0
    assert figures.cost.gap_monthly == pytest.approx(-gap * figures.cost.plan_tasks)
    words = " ".join(cost_words(rec, ev, figures))
    assert "above the best single offer (Alpha Compute alone, 3.70 on the same scenarios)" in words
    assert "because no vendor may provide more than 60% of the capacity (plan.max_vendor_share)." in words


@pytest.mark.slow
def test_a_condition_of_signing_is_listed_beside_the_ask_and_named_by_compare(tmp_path: Path):
    """Alpha's acceptance rests on an attestation still to be confirmed: the memo asks for Alpha on that condition,
    compare names it under its table, JSON carries it on the ask; once confirmed it is no longer listed."""
    root = decisionws.write(tmp_path / "ws")
    offer = root / "offers" / "alpha.yaml"
    text = offer.read_text(encoding="utf-8")
    offer.write_text(
        text + "conditions:\n  - {text: SOC 2 Type II report received, gates: attestation}\n", encoding="utf-8"
    )
    table = run("compare", "-w", root, "--as-of", AS_OF)
    assert table.exit_code == 0, table.output
    assert "Unconfirmed: Alpha Compute (alpha) rests on SOC 2 Type II report received" in " ".join(table.stdout.split())
    data = json.loads(run("compare", "-w", root, "--as-of", AS_OF, "--format", "json").stdout)
    alpha = next(x for x in data["recommendation"]["lines"] if x["offer"] == "alpha")
    assert alpha["conditions"] == ["SOC 2 Type II report received (attestation)"]
    memo = tmp_path / "memo.html"
    assert run("report", "--board", "-w", root, "--as-of", AS_OF, "--format", "html", "--out", memo).exit_code == 0
    assert "on condition, to confirm before signing: SOC 2 Type II report received (attestation)" in html_words(
        memo.read_text(encoding="utf-8")
    )
    offer.write_text(
        text + "conditions:\n  - {text: SOC 2 Type II report received, gates: attestation, confirmed: true}\n",
        encoding="utf-8",
    )
    assert "Unconfirmed" not in run("compare", "-w", root, "--as-of", AS_OF).stdout
