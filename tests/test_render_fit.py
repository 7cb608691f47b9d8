"""render/fit.py: which columns a table keeps on a narrow terminal, and --columns."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from procure.render.fit import choose, column_name, fit_table, prioritise


def table(columns: dict[str, list[str]], priorities: dict[str, int], together=()) -> Table:
    t = Table()
    for header in columns:
        t.add_column(header, justify="right")
    for row in zip(*columns.values()):
        t.add_row(*row)
    return prioritise(t, priorities, together=together)


def width_of(t: Table) -> int:
    console = Console(width=500, record=True, file=open("/dev/null", "w"))
    console.print(t)
    return max(len(line) for line in console.export_text().splitlines())


def test_an_empty_column_goes_before_any_other_even_one_marked_to_stay_longer():
    t = table(
        {
            "Offer": ["alpha-long-id", "bravo-long-id"],
            "Low": ["1.00", "2.00"],
            "Blank": ["—", "—"],
            "High": ["3.00", "4.00"],
        },
        {"Low": 1, "Blank": 9},
    )
    # 13 + 4 + 5 + 4 wide, 4 x 2 padding, 5 rules: 39; without Blank 31, without Low 38: either fits
    assert fit_table(Console(width=38), t, 38) == ["Blank"]
    assert [str(c.header) for c in t.columns] == ["Offer", "Low", "High"]


def test_marked_columns_go_lowest_priority_first_and_unmarked_ones_stay():
    t = table({"Offer": ["alpha-long-id"], "A": ["1111111"], "B": ["2222222"], "C": ["3333333"]}, {"A": 2, "B": 1})
    # Offer 13, A/B/C 7 each: 13 + 7 + 2 x 2 padding + 3 rules = 27 with one of A, B, C
    assert fit_table(Console(width=27), t, 27) == ["B", "A"]
    assert [str(c.header) for c in t.columns] == ["Offer", "C"]


def test_a_range_goes_as_one():
    t = table(
        {"Offer": ["alpha-long-id"], "P10": ["0.00633"], "P50": ["0.00684"], "P90": ["0.00739"]},
        {"P50": 2, "P10": 1, "P90": 1},
        together=(("P10", "P90"),),
    )
    # without P10 alone, 13 + 7 + 7 + 3 x 2 + 4 = 37 would fit with half a range (P50, P90): P90 goes with it
    assert fit_table(Console(width=37), t, 37) == ["P10", "P90"]
    assert [str(c.header) for c in t.columns] == ["Offer", "P50"]


def test_when_only_kept_columns_are_left_the_rightmost_goes_rather_than_an_id_being_split():
    t = table({"Offer": ["petrel-b200-ondemand"], "Cost": ["0.00784"], "Share": ["25.2%"]}, {})
    dropped = fit_table(Console(width=34), t, 34)
    assert dropped == ["Share"] and width_of(t) <= 34
    assert "petrel-b200-ondemand" in "".join(c for c in t.columns[0]._cells)


def test_columns_are_named_by_their_headers_and_chosen_in_the_order_given():
    assert (
        column_name("P(cheapest)") == "p-cheapest"
        and column_name("List USD/GPU-h") == "list-usd-gpu-h"
        and column_name("Saved (UTC)") == "saved-utc"
    )
    t = table({"Offer": ["a"], "P10": ["1"], "P90": ["2"], "Reason": ["x"]}, {"Reason": 1})
    assert choose(t, ["p90", "Offer"]) == []
    assert [str(c.header) for c in t.columns] == ["P90", "Offer"]
    assert fit_table(Console(width=5), t, 5) == []  # asked for: never dropped, whatever the width
    assert choose(table({"Offer": ["a"]}, {}), ["offer", "nope"]) == ["nope"]
