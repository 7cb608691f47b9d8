"""Tables that fit the terminal: below a width, the least important columns are dropped (and named)
rather than numbers and ids being split across lines.

A renderer marks each table's columns with a drop order (`priorities`); `fit` then removes the
marked columns, least important first, until the table's narrowest layout fits. Numbers and ids
never wrap: a column is treated as one when it is right-aligned or none of its cells holds a space.
Columns of prose (vendor names, reasons, requirements) wrap at spaces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table

# Prose wraps at spaces; a word longer than this may still be folded rather than widen the table.
LONGEST_UNBROKEN_WORD = 32  # an id or a field path (performance.interactivity) stays whole
# A one-line column (a reason) is cut to the room left, but never narrower than this.
ONE_LINE_MIN = 10


def prioritise(
    table: Table,
    priorities: dict[str, int],
    one_line: tuple[str, ...] = (),
    together: tuple[tuple[str, ...], ...] = (),
    asked: tuple[str, ...] = (),
) -> Table:
    """Mark columns by header: 1 is dropped first, then 2, ...; unmarked columns (the id, the decision
    figures and their units) are kept as long as anything marked is left.

    `one_line` columns (reasons, notes) keep one line per row: cut with an ellipsis to the room the
    other columns leave (the full text is in --format json). Each group of `together` (a range's
    P10 and P90) is dropped as one. `asked` columns are the ones an option asked for (--uncertainty's
    ranges, --horizon's cost): they go after every other marked column and the one-line reason, by
    their own priorities.
    """
    for column in table.columns:
        header = str(column.header)
        if header in priorities:
            column.drop_priority = priorities[header]  # type: ignore[attr-defined]
        if header in one_line:
            column.one_line = True  # type: ignore[attr-defined]
        if header in asked:
            column.asked = True  # type: ignore[attr-defined]
        group = next((g for g in together if header in g), None)
        if group:
            column.together = group  # type: ignore[attr-defined]
    return table


def _is_atom(column: Any) -> bool:
    cells = [str(c) for c in column._cells]
    return column.justify == "right" or not any(" " in c.strip() for c in cells)


def _empty(column: Any) -> bool:
    return bool(column._cells) and all(
        str(c).strip() in ("", "0", "0.0", "0.00", "0%", "—", "-") for c in column._cells
    )


def _range(column: Any) -> tuple[int, int]:
    """The narrowest and the widest content width of a column (without padding).

    A number or id is never narrower than its longest cell; prose never narrower than its longest
    word (up to a limit). A header wraps at spaces.
    """
    from rich.cells import cell_len

    lines = [line for c in column._cells for line in str(c).splitlines()] or [""]
    header = str(column.header)
    header_word = max((cell_len(w) for w in header.split()), default=0)
    header_line = max((cell_len(line) for line in header.splitlines()), default=0)
    longest_line = max(cell_len(line) for line in lines)
    if getattr(column, "one_line", False):
        return max(min(longest_line, max(ONE_LINE_MIN, header_word)), 1), max(longest_line, header_line, 1)
    if _is_atom(column):
        low = max(longest_line, header_word)
    else:
        longest_word = max((cell_len(w) for line in lines for w in line.split()), default=1)
        low = max(min(longest_word, LONGEST_UNBROKEN_WORD), header_word)
    return max(low, 1), max(low, longest_line, header_line)


def _overhead(table: Table) -> int:
    return table._extra_width + sum(table._get_padding_width(i) for i in range(len(table.columns)))


def _allocate(table: Table, width: int) -> bool:
    """Set every column's width so the table fits `width` without splitting a number, an id or a word.

    False when even the narrowest layout is too wide.
    """
    for i, column in enumerate(table.columns):
        column._index = i
    ranges = [_range(c) for c in table.columns]
    room = width - _overhead(table)
    if sum(high for _, high in ranges) <= room:
        return True
    if sum(low for low, _ in ranges) > room:
        return False
    # The room beyond the narrowest layout: columns that want little more get all of it first (so
    # short labels and headers do not wrap); long prose shares what remains.
    spare = room - sum(low for low, _ in ranges)
    widths = [low for low, _ in ranges]
    wanting = sorted(range(len(ranges)), key=lambda i: ranges[i][1] - ranges[i][0])
    for n, i in enumerate(wanting):
        share = spare // (len(wanting) - n)
        extra = min(ranges[i][1] - ranges[i][0], max(share, 0))
        widths[i] += extra
        spare -= extra
    for column, w, (_, high) in zip(table.columns, widths, ranges):
        column.width = w  # at least the longest number or id: those never wrap; headers still may
        column.overflow = "fold"
        if getattr(column, "one_line", False):
            column.no_wrap, column.overflow = True, "ellipsis"
            if w < high:
                table.clipped = True  # type: ignore[attr-defined]
    return True


def fit_table(console: Console, table: Table, width: int) -> list[str]:
    """Drop marked columns, least important first, until the table fits `width`; the dropped headers."""
    dropped: list[str] = []
    while not _allocate(table, width):
        if getattr(table, "chosen", False):
            break  # the columns asked for with --columns are shown, wrapped if they must be
        # A column that says nothing (every cell blank, zero or a dash) goes before any other, marked or
        # not; then the marked ones, lowest priority first.
        marked = [c for c in table.columns[1:] if _empty(c)] or [
            c for c in table.columns if getattr(c, "drop_priority", None) is not None and not getattr(c, "asked", False)
        ]
        # then a reason: its rows say "—" or "no" for a failing offer already
        marked = marked or [c for c in table.columns if getattr(c, "one_line", False)]
        # last of the optional ones, the columns an option asked for
        marked = marked or [c for c in table.columns if getattr(c, "asked", False)]
        # and when even the kept columns do not fit, the rightmost of them: an id or a figure is
        # never split, whatever the width (the first column, the id, stays)
        marked = marked or table.columns[-1:] if len(table.columns) > 1 else marked
        if not marked:
            break  # nothing left to drop: the terminal wraps what does not fit
        victim = min(
            marked, key=lambda c: (not _empty(c), getattr(c, "drop_priority", None) or 0, -table.columns.index(c))
        )
        group = getattr(victim, "together", None)
        for column in [c for c in table.columns if group and str(c.header) in group] or [victim]:
            table.columns.remove(column)
            dropped.append(" ".join(str(column.header).split()))
    return dropped


def column_name(header: object) -> str:
    """A column's name for --columns: its header in lower case, each run of other characters one
    hyphen ("P(cheapest)" -> "p-cheapest", "List USD/GPU-h" -> "list-usd-gpu-h")."""
    import re

    return re.sub(r"[^a-z0-9]+", "-", str(header).lower()).strip("-")


def column_names(renderable: RenderableType) -> list[str]:
    """Every column name of every table in `renderable`, in order, once each."""
    names: list[str] = []
    for table in _tables(renderable):
        for column in table.columns:
            name = column_name(column.header)
            if name and name not in names:
                names.append(name)
    return names


def choose(renderable: RenderableType, names: list[str]) -> list[str]:
    """Keep, in each table holding any of them, only the columns named (by column_name or by their
    header, in any case) in the order given; a table holding none is left whole. The names that
    match no column are returned (nothing is changed then). Chosen columns are never dropped to fit."""
    wanted = [column_name(n) for n in names]
    known = column_names(renderable)
    unknown = [n for n, w in zip(names, wanted) if w not in known]
    if unknown:
        return unknown
    for table in _tables(renderable):
        by_name = {column_name(c.header): c for c in table.columns}
        picked = [by_name[w] for w in dict.fromkeys(wanted) if w in by_name]
        if not picked:
            continue
        for column in picked:
            column.drop_priority = None  # type: ignore[attr-defined]
        table.columns[:] = picked
        table.chosen = True  # type: ignore[attr-defined]
        if isinstance(table.title, str):  # a table of one narrow column would break its title's words
            table.min_width = max(table.min_width or 0, min(len(table.title), 60))
    return []


def _tables(renderable: Any) -> list[Table]:
    from rich.console import Group
    from rich.table import Table

    if isinstance(renderable, Table):
        return [renderable]
    if isinstance(renderable, Group):
        return [t for r in renderable.renderables for t in _tables(r)]
    return []


def fit(console: Console, renderable: RenderableType, width: int) -> list[str]:
    """Fit every table in `renderable` (a table or a group) to `width`; the dropped column headers."""
    dropped: list[str] = []
    for table in _tables(renderable):
        for header in fit_table(console, table, width):
            if header not in dropped:
                dropped.append(header)
    return dropped


def clipped(renderable: RenderableType) -> bool:
    """Whether a one-line column (a reason) was cut to fit."""
    return any(getattr(t, "clipped", False) for t in _tables(renderable))


def natural_width(console: Console, renderable: RenderableType) -> int:
    """The width at which nothing wraps (for --wide)."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update(width=100_000), renderable).maximum


def hidden_note(dropped: list[str], width: int, cut: bool = False) -> str:
    """Which columns were left out (and whether reasons were cut), and how to see them: two lines at
    80 columns, so the table stays above the fold of a 24-line terminal."""
    noun = "column" if len(dropped) == 1 else "columns"
    parts = [f"{len(dropped)} {noun} left out to fit {width} columns: {', '.join(dropped)}."] if dropped else []
    if cut:
        parts.append("Reasons cut to one line.")
    return " ".join(parts) + " All: --wide; some: --columns NAME,...; every figure: --format json."


def hidden_text(dropped: list[str], width: int, cut: bool = False) -> Any:
    """hidden_note as a note of the screen, its one-line summary naming --wide first."""
    from rich.text import Text

    noun = "column" if len(dropped) == 1 else "columns"
    short = (
        f"{len(dropped)} {noun} left out to fit {width} columns (--wide): {', '.join(dropped)}"
        if dropped
        else "Reasons cut to one line (--wide)"
    )
    return summarised(
        Text(hidden_note(dropped, width, cut)),
        clip_line(short + ("; reasons cut (--wide)" if cut and dropped else ""), width),
    )


NOTE_LINES = 3  # the notes below a table take at most this many lines of the screen
SCREEN_LINES = 24  # the terminal every default output fits: its last line is the prompt's


def summarised(text: Any, summary: str) -> Any:
    """A text (a note, a method, a list of limits) with the one line that stands for it on a screen
    that folds its notes (screen()); plain text, as every note is."""
    from rich.text import Text

    class Note(Text):
        pass

    note = Note(text.plain if isinstance(text, Text) else str(text))
    note.summary = summary  # type: ignore[attr-defined]
    return note


def _lines(console: Console, renderable: Any, width: int) -> int:
    return len(console.render_lines(renderable, console.options.update(width=width), pad=False))


def _note_items(renderable: Any) -> list[tuple[str, Any]]:
    """A folded note's one-line stand-in: its summary when it has one, else each of its lines."""
    summary = getattr(renderable, "summary", None)
    if summary:
        return [(summary, renderable)]
    from rich.text import Text

    if isinstance(renderable, Text):
        return [(line, renderable) for line in renderable.plain.splitlines() if line.strip()]
    title = str(getattr(renderable, "title", "") or "a table")
    return [(f"{title.rstrip('.')} (a table; --notes prints it).", renderable)]


def _cut_rows(table: Table, keep: int) -> int:
    """Keep a table's first `keep` rows; the number cut."""
    cut = len(table.rows) - keep
    if cut > 0:
        del table.rows[keep:]
        for column in table.columns:
            del column._cells[keep:]
    return max(cut, 0)


def _shorter(console: Console, table: Table, width: int, room: int) -> tuple[list[str], int]:
    """A table taller than `room` whose marked columns wrap its rows loses them, least important first,
    before it loses rows (one line per row is what makes a ranking readable); the headers dropped, and the
    table's lines as it is left (laying a table out is most of a screen's work: each is counted once)."""
    dropped: list[str] = []
    lines = _lines(console, table, width)
    while lines > room and not getattr(table, "chosen", False):
        marked = [c for c in table.columns if getattr(c, "drop_priority", None) is not None]
        if not marked:
            break
        victim = min(marked, key=lambda c: (c.drop_priority, -table.columns.index(c)))
        group = getattr(victim, "together", None)
        for column in [c for c in table.columns if group and str(c.header) in group] or [victim]:
            table.columns.remove(column)
            dropped.append(" ".join(str(column.header).split()))
        table.clipped = False  # type: ignore[attr-defined]
        for column in table.columns:  # the others share the room again
            column.width, column.no_wrap = None, False
        _allocate(table, width)
        lines = _lines(console, table, width)
    return dropped, lines


def screen(
    console: Console,
    renderable: Any,
    width: int,
    height: int,
    first: str | None = None,
    after: list[str] | None = None,
    dropped: list[str] | None = None,
    notes: bool = False,
    every_row: bool = False,
) -> list[Any]:
    """What a command prints on a terminal of `width` x `height`, in order: the decision (`first` and the
    texts above the first table), the first table, then whatever else fits (later tables, notes) so that
    the whole stays above the fold (`height` - 1 lines; the last is the prompt's). The notes that do not
    fit (a table's caption, the texts after the first table, `after`, the columns left out: `dropped`, None
    when the table was not fitted to the width (--wide))
    are summarised in at most NOTE_LINES lines, one line each, then how many more and `--notes`; a
    table longer than the screen keeps its first rows and says how many more (`--all`).
    With `notes` every note is printed in full; with `every_row` every row."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts = list(renderable.renderables) if isinstance(renderable, Group) else [renderable]
    for i, part in reversed(list(enumerate(parts))):  # a table's caption is one of the notes below it
        if isinstance(part, Table) and part.caption:
            parts.insert(i + 1, Text(str(part.caption)))
            part.caption = None
    # no table (nothing to hedge): the first text is the decision, the others are notes
    first_table = next((i for i, p in enumerate(parts) if isinstance(p, Table)), 0)
    head = ([Text(first)] if first else []) + parts[:first_table]
    main = parts[first_table : first_table + 1]
    rest = parts[first_table + 1 :] + ([Text("\n".join(after))] if after else [])
    budget = height - 1
    used = sum(_lines(console, p, width) for p in head)
    more_rows = ""
    table_lines: int | None = None  # the first table's lines, counted again only when it changes
    if main and isinstance(main[0], Table) and not every_row and not notes and dropped is not None:
        shorter, table_lines = _shorter(console, main[0], width, budget - used - 1)
        dropped = dropped + [h for h in shorter if h not in dropped]
    hidden = (
        hidden_text(dropped, width, clipped(renderable))
        if dropped or dropped is not None and clipped(renderable)
        else None
    )
    if hidden is not None:
        rest.append(hidden)
    if notes:
        return head + main + rest
    if main and isinstance(main[0], Table) and not every_row:  # a table taller than the screen: its first rows
        table, room = main[0], budget - used - (1 if rest else 0)
        cut = 0
        table_lines = _lines(console, table, width) if table_lines is None else table_lines
        while table_lines + (1 if cut else 0) > room and len(table.rows) > 1:
            cut += _cut_rows(table, len(table.rows) - 1)
            table_lines = _lines(console, table, width)
        if cut:
            more_rows = f"{cut} more row{'s' if cut != 1 else ''}: --all shows every row."
            used += 1
    used += table_lines if table_lines is not None else sum(_lines(console, p, width) for p in main)
    shown: list[Any] = []
    folded: list[Any] = []
    for n, part in enumerate(rest):  # in full, in order, while the rest still has its line of notes below
        size = _lines(console, part, width)
        if not folded and used + size + (1 if n < len(rest) - 1 else 0) <= budget:
            shown.append(part)
            used += size
        else:
            folded.append(part)
    lines = _folded_lines(folded, hidden, width, max(1, min(NOTE_LINES, budget - used)))
    rows_line = [Text(more_rows)] if more_rows else []
    return head + main + rows_line + shown + [Text(line) for line in lines]


def _folded_lines(folded: list[Any], hidden: Any, width: int, room: int) -> list[str]:
    """The notes that do not fit, one line each in at most `room` lines, the columns left out (`hidden`) said first
    whatever else is folded; past the room, how many more and `--notes`."""
    items = [item for part in sorted(folded, key=lambda p: p is not hidden) for item in _note_items(part)]
    lines = [clip_line(text, width) for text, _ in items]
    if len(lines) > room or any(line != clip_line(text, 10**6) for line, (text, _) in zip(lines, items)):
        keep = lines[: room - 1]
        left = len(items) - len(keep)
        last = "Each note in full: --notes (or --format json)."
        if left:
            last = f"{left} more note{'s' if left != 1 else ''} ({_what(items[len(keep) :])}): in full with --notes."
            if len(last) > width:  # what is folded away does not fit the line: the count alone
                last = f"{left} more note{'s' if left != 1 else ''}: in full with --notes (or --format json)."
        lines = keep + [last]
    return lines


def _what(items: list[tuple[str, Any]]) -> str:
    """What the folded notes are, by their first words."""
    return "; ".join(" ".join(text.split()[:2]).rstrip(":,;.") + "…" for text, _ in items)


def clip_line(text: str, width: int) -> str:
    """One line of at most `width` characters, an ellipsis when cut."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
