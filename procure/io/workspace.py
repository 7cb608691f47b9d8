"""Find and load a workspace: procure.yaml, offers/, grades/, performance/ and market/.

Every problem in every file is collected before anything is raised, so that `procure validate`
shows the whole list at once, one line each with file, line and field.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from procure.errors import InputError, Problem
from procure.io.files import check_link, folders_unchanged, protect, register_root
from procure.io.tables import parse_date, parse_number, read_csv_rows
from procure.io.validation import _type_name, validation_problems
from procure.io.workspace_checks import (
    _check_config,
    _check_grades,
    _offer_references,
    check_offer,
    responsibility_problems,
)
from procure.io.yamlsafe import Document, load_yaml, read_text
from procure.model.inputs import (
    Grade,
    Offer,
    ReferenceCurve,
    WorkspaceConfig,
)

CONFIG_FILE = "procure.yaml"
QUOTES_FILE = "market/quotes.csv"
RENT_FILE = "market/rent.csv"
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class InputFile:
    path: str  # relative to the workspace root, with forward slashes
    sha256: str


@dataclass(frozen=True)
class IndexLevel:
    date: date
    price: float


@dataclass
class PriceSeries:
    """A dated price series file (market/rent.csv, or one named on the command line) whose rows are read when first
    asked for, so that a command that turns out not to need them neither reads it nor stops on its problems."""

    path: Path
    display: str
    _levels: list[IndexLevel] | None = field(default=None, repr=False, compare=False)

    def levels(self) -> list[IndexLevel]:
        if self._levels is None:
            self._levels = read_series(self.path, self.display)
        return self._levels


@dataclass
class Workspace:
    root: Path
    config: WorkspaceConfig
    offers: list[Offer]
    grades: list[Grade]
    curves: dict[str, ReferenceCurve]
    index: list[IndexLevel]  # market/index.csv, sorted by date; empty when absent
    inputs: list[InputFile] = field(default_factory=list)
    lines: dict[str, Document] = field(default_factory=dict)  # offer id -> its document
    actuals: dict[str, Any] = field(
        default_factory=dict
    )  # offer id -> procure.io.actuals.OfferActuals (signed vendors' delivered evidence)
    histories: dict[str, list[Any]] = field(default_factory=dict)  # offer id -> its operator.status_history incidents
    _market: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # market files once read

    def fx_rate(self, currency: str | None) -> float:
        """Units of workspace currency per unit of `currency` (validated at load)."""
        if currency is None or currency == self.config.currency:
            return 1.0
        return self.config.assumptions.fx[currency]

    @property
    def quotes(self) -> list[Any] | None:
        """market/quotes.csv's observations (procure.io.quotes.Quote), None when the workspace has none. Read on
        first use: only the report's market indices need them, so no other command reads them or stops on them."""
        if "quotes" not in self._market:
            from procure.io.quotes import read_quotes

            path = self.root / QUOTES_FILE
            self._market["quotes"] = read_quotes(path, QUOTES_FILE) if path.is_file() else None
        return self._market["quotes"]

    @property
    def rent(self) -> PriceSeries | None:
        """market/rent.csv, the buyer's own rent history, None when the workspace has none; its rows are read when
        a hedge first asks for them (an index-linked offer's rent is index + spread and never needs them)."""
        path = self.root / RENT_FILE
        return PriceSeries(path, RENT_FILE) if path.is_file() else None

    def index_level_on(self, as_of: date) -> IndexLevel | None:
        """The latest index level on or before as_of."""
        found = None
        for level in self.index:
            if level.date <= as_of:
                found = level
            else:
                break
        return found


NOT_A_WORKSPACE = f"not a procure workspace (no {CONFIG_FILE} here or above): run `procure init DIR`"


def find_workspace(start: Path) -> Path:
    """The nearest folder from `start` upward that holds procure.yaml, as git finds its repository.

    `start` itself is returned unchanged when it is a workspace, so paths stay as the user wrote them.
    """
    start = Path(start)
    if (start / CONFIG_FILE).is_file():
        return start
    here = start.resolve()
    for folder in here.parents:
        if (folder / CONFIG_FILE).is_file():
            return folder
    raise InputError([Problem(str(here), None, "", NOT_A_WORKSPACE)])


@folders_unchanged()  # its files' link checks share what they learn of the folders above them
def load_workspace(root: Path, actuals: bool = True) -> Workspace:
    """Load and check the whole workspace (found from `root` upward); raise InputError listing every problem.
    `actuals=False`: leave actuals/ unread (an import checks what it merges into itself, so that it can
    replace a kept month the loader refuses)."""
    root = find_workspace(root)
    problems: list[Problem] = []
    inputs: list[InputFile] = []

    config_path = root / CONFIG_FILE

    check_link(config_path, CONFIG_FILE, root)
    register_root(root)
    config, config_doc = _load_model_doc(root, config_path, WorkspaceConfig, problems, inputs)
    grade_docs = [
        _load_model_doc(root, p, Grade, problems, inputs) for p in _files(root, "grades", problems, ".yaml", ".yml")
    ]
    grades = [g for g, _ in grade_docs if g is not None]
    curves = _load_curves(root, problems, inputs)
    offers, offer_docs, unloaded_ids = _load_offers(root, problems, inputs)
    index = _load_index(root, problems, inputs)
    histories = _load_histories(root, offers, offer_docs, problems, inputs)
    found_actuals = {}
    if actuals and (root / "actuals").is_dir():
        from procure.io.actuals import load_actuals, offer_size

        sizes = {o.id: offer_size(o) for o in offers}
        found_actuals = load_actuals(
            root,
            [o.id for o in offers] + sorted(unloaded_ids),
            problems,
            lambda path, text: _record(root, path, text, inputs),
            sizes,
        )

    if config is not None and config_doc is not None:
        # Unknown acceptable grades are only judged when every grade file loaded.
        all_grades = grades if all(g is not None for g, _ in grade_docs) else None
        problems.extend(_check_config(config, config_doc, all_grades))
    # Offers are checked even when procure.yaml is broken (the checks that need it are skipped),
    # so that one run lists every problem.
    if config is not None and config_doc is not None:
        problems.extend(_offer_references(config, config_doc, offers, unloaded_ids))
    curve_names = {p.stem for p in (root / "performance").glob("*.csv")}
    for offer in offers:
        problems.extend(check_offer(offer, offer_docs[offer.id], config, curve_names, index))
    problems.extend(_check_grades([(g, d) for g, d in grade_docs if g is not None and d is not None]))

    if problems:
        raise InputError(sorted(set(problems), key=lambda p: (p.file, p.line or 0, p.field, p.message)))
    assert config is not None
    inputs.sort(key=lambda f: f.path)
    protect([root / f.path for f in inputs])
    offers.sort(key=lambda o: o.id)
    grades.sort(key=lambda g: (g.rank, g.id))
    return Workspace(root, config, offers, grades, curves, index, inputs, offer_docs, found_actuals, histories)


def _load_offers(
    root: Path, problems: list[Problem], inputs: list[InputFile]
) -> tuple[list[Offer], dict[str, Document], set[str]]:
    """The offers of offers/, each id once: (the offers, their documents by id, the ids of those that did not load,
    whose own problems are named and whose actuals folders are not unknown)."""
    offer_docs: dict[str, Document] = {}
    offers: list[Offer] = []
    seen_ids: dict[str, str] = {}
    unloaded_ids: set[str] = set()
    for path in _files(root, "offers", problems, ".yaml", ".yml"):
        offer, doc = _load_model_doc(root, path, Offer, problems, inputs)
        if offer is None or doc is None:
            if doc is not None and isinstance(doc.data, dict) and isinstance(doc.data.get("id"), str):
                unloaded_ids.add(doc.data["id"])  # its own problems are named; its actuals folder is not unknown
            continue
        if offer.id in seen_ids:
            problems.append(doc.problem(("id",), f"duplicate offer id '{offer.id}' (also in {seen_ids[offer.id]})"))
            continue
        seen_ids[offer.id] = doc.display
        offers.append(offer)
        offer_docs[offer.id] = doc
    return offers, offer_docs, unloaded_ids


def _load_histories(
    root: Path, offers: list[Offer], docs: dict[str, Document], problems: list[Problem], inputs: list[InputFile]
) -> dict[str, list[Any]]:
    """Each offer's operator.status_history, read (procure/io/incidents.py) with its problems located."""
    from procure.io.incidents import read_incidents

    found: dict[str, list[Any]] = {}
    read: dict[Path, list[Any]] = {}
    for offer in offers:
        spec = offer.operator.status_history
        if spec is None:
            continue
        path = root / spec.file
        doc = docs[offer.id]
        loc = ("operator", "status_history", "file")
        outside = _outside(root, path)
        if outside is not None or not path.is_file():
            why = "links outside the workspace" if outside is not None else "no such file"
            problems.append(
                doc.problem(
                    loc,
                    f"{why}: {spec.file} (a Statuspage incidents.json or an incidents CSV, relative to the workspace)",
                )
            )
            continue
        if path not in read:
            try:
                read[path] = read_incidents(path, _display(root, path))
                _record(root, path, read_text(path, _display(root, path)), inputs)
            except InputError as exc:
                problems.extend(exc.problems)
                continue
        found[offer.id] = read[path]
    return found


def load_settings(root: Path) -> tuple[WorkspaceConfig, list[Grade]]:
    """procure.yaml and grades/ only, checked: what `index build --scope-adjust` needs, so that a
    benchmark can be built before any offer validates (an index-linked offer needs the index first)."""
    root = Path(root)
    problems: list[Problem] = []
    inputs: list[InputFile] = []
    config_path = root / CONFIG_FILE
    if not config_path.is_file():
        raise InputError(
            [Problem(str(root), None, "", f"no {CONFIG_FILE} here: not a procure workspace (use --workspace DIR)")]
        )
    config, config_doc = _load_model_doc(root, config_path, WorkspaceConfig, problems, inputs)
    grade_docs = [
        _load_model_doc(root, p, Grade, problems, inputs) for p in _files(root, "grades", problems, ".yaml", ".yml")
    ]
    grades = [g for g, _ in grade_docs if g is not None]
    if config is not None and config_doc is not None:
        problems.extend(
            _check_config(config, config_doc, grades if all(g is not None for g, _ in grade_docs) else None)
        )
    problems.extend(_check_grades([(g, d) for g, d in grade_docs if g is not None and d is not None]))
    if problems:
        raise InputError(sorted(set(problems), key=lambda p: (p.file, p.line or 0, p.field, p.message)))
    assert config is not None
    return config, sorted(grades, key=lambda g: (g.rank, g.id))


# --- files --------------------------------------------------------------------------------------


def _display(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _files(root: Path, folder: str, problems: list[Problem], *suffixes: str) -> list[Path]:
    """The input files of one folder, refusing links that lead outside the workspace."""
    directory = root / folder
    if not directory.is_dir():
        problems.append(Problem(folder + "/", None, "", "folder is missing"))
        return []
    found: list[Path] = []
    real_root = root.resolve()
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or path.suffix.lower() not in suffixes:
            continue
        problem = _outside(root, path, real_root)
        if problem:
            problems.append(problem)
            continue
        found.append(path)
    if not found:
        problems.append(
            Problem(
                folder + "/",
                None,
                "",
                f"no {' or '.join(suffixes)} files: expected at least one{NEXT_STEP.get(folder, '')}",
            )
        )
    return found


# What to do about an empty folder, named in its problem.
NEXT_STEP = {
    "offers": "; copy offer-template.yaml (procure init DIR writes it) into offers/ once per offer, or turn RFP "
    "answers into offer files with procure import FILE",
    "grades": "; procure init DIR writes the default grades into DIR/grades/",
}


def _outside(root: Path, path: Path, real_root: Path | None = None) -> Problem | None:
    """An input that links outside the workspace is refused: a vendor's archive must not make
    procure read (and echo) other files."""
    if not path.resolve().is_relative_to(real_root or root.resolve()):
        return Problem(_display(root, path), None, "", "refused: links to a file outside the workspace")
    return None


def _record(root: Path, path: Path, text: str, inputs: list[InputFile]) -> None:
    inputs.append(InputFile(_display(root, path), hashlib.sha256(text.encode("utf-8")).hexdigest()))


def _load_model_doc(
    root: Path, path: Path, model: type[M], problems: list[Problem], inputs: list[InputFile]
) -> tuple[M | None, Document | None]:
    display = _display(root, path)
    try:
        doc = load_yaml(path, display, collect=True)
        _record(root, path, doc.text, inputs)
    except InputError as exc:
        problems.extend(exc.problems)
        return None, None
    # Invalid dates and duplicate keys do not hide the other problems of the file.
    problems.extend(doc.problems)
    if not isinstance(doc.data, dict):
        problems.append(Problem(display, 1, "", f"expected a mapping of fields, got {_type_name(doc.data)}"))
        return None, doc
    try:
        validated = model.model_validate(doc.data)
    except ValidationError as exc:
        reported = {p.field for p in doc.problems}  # a bad date, read as text, is not reported twice
        problems.extend(p for p in validation_problems(exc, doc, model) if p.field not in reported)
        if model is Offer:
            problems.extend(responsibility_problems(doc))
        return None, doc
    return (None if doc.problems else validated), doc


# --- pydantic errors as one-line problems --------------------------------------------------------


# --- cross-field and cross-file rules ------------------------------------------------------------


def _load_curves(root: Path, problems: list[Problem], inputs: list[InputFile]) -> dict[str, ReferenceCurve]:
    curves: dict[str, ReferenceCurve] = {}
    directory = root / "performance"
    if not directory.is_dir():
        return curves
    for path in sorted(directory.glob("*.csv")):
        display = _display(root, path)
        outside = _outside(root, path)
        if outside:
            problems.append(outside)
            continue
        text = read_text(path, display)
        curve = read_curve(text, display, path.stem, problems)
        if curve is not None:
            curves[path.stem] = curve
            _record(root, path, text, inputs)
    return curves


def read_curve(text: str, display: str, name: str, problems: list[Problem]) -> ReferenceCurve | None:
    """A reference curve file's points (interactivity, output_tok_s_gpu[, ttft_s]) and marks; None
    with problems when a row is bad. The one validator of curves: `perf import` checks the files it
    is about to write with it, so that it never writes a curve every later command would refuse."""
    from procure.io.tables import csv_text_rows

    # An optional third column carries the time to first token (InferenceX imports write it).
    columns: tuple[str, ...] = ("interactivity", "output_tok_s_gpu")
    header = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    if [h.strip() for h in header.split(",")] == [*columns, "ttft_s"]:
        columns = (*columns, "ttft_s")
    rows, comments, found = csv_text_rows(text, display, columns)
    problems.extend(found)  # rows of the wrong length are reported; the others are still read
    points: list = []
    for line, row in rows:
        x = parse_number(row["interactivity"], display, line, "interactivity", problems)
        y = parse_number(row["output_tok_s_gpu"], display, line, "output_tok_s_gpu", problems)
        t = (
            parse_number(row["ttft_s"], display, line, "ttft_s", problems)
            if "ttft_s" in row and row["ttft_s"]
            else None
        )
        if x is not None and y is not None:
            points.append((x, y) if t is None else (x, y, t))
    if not rows and not found:
        problems.append(Problem(display, None, "", "no points: expected at least one row"))
        return None
    if not rows or len(points) != len(rows) or found:
        return None
    marks = dict(
        c.split(":", 1)
        for c in comments
        if c.split(":", 1)[0] in ("points_source", "trial date", "gpu", "model", "precision")
    )
    measured = marks.get("points_source", "").strip() == "measured"
    try:
        measured_on = date.fromisoformat(marks.get("trial date", "").strip()) if measured else None
    except ValueError:
        measured_on = None
    what = {
        k: marks[k].strip()[:80] or None for k in ("gpu", "model", "precision") if k in marks
    }  # what it measures (procure/model/references.py)
    return ReferenceCurve(
        name=name,
        points=points,
        source=" ".join(comments),
        points_source="measured" if measured else "reference",
        measured_on=measured_on,
        **what,
    )


def check_curves_to_write(out_dir: Path, files: dict[str, str]) -> None:
    """Curve files an import is about to write, read as every later command will read them
    (`read_curve`): a figure the loader refuses (a throughput of 1e300) is refused now, with nothing
    written, instead of breaking every command after."""
    problems: list[Problem] = []
    for name, text in files.items():
        found: list[Problem] = []
        read_curve(text, str(Path(out_dir) / name), Path(name).stem, found)
        problems += [
            Problem(p.file, p.line, p.field, f"{p.message} (in the curve this import would write: nothing was written)")
            for p in found
        ]
    if problems:
        raise InputError(problems)


# A price series is either a plain history (date, price) or an index built by `procure index build`
# (period, level, observations: the period's first day, its level, how many observations made it).
SERIES_LAYOUTS: tuple[tuple[str, ...], ...] = (("date", "price"), ("period", "level", "observations"))


def read_price_series(path: Path, display: str) -> tuple[list[IndexLevel], list[Problem]]:
    """A dated price series from CSV, sorted by date; problems carry the line of each bad row."""
    try:
        text = read_text(path, display)
    except InputError as exc:
        return [], exc.problems
    header = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    try:
        names = tuple(h.strip() for h in next(csv.reader([header]))) if header else ()
    except csv.Error:
        names = ()  # read_csv_rows reports it with its line
    columns = next((layout for layout in SERIES_LAYOUTS if names == layout), SERIES_LAYOUTS[0])
    rows, _, problems = read_csv_rows(path, display, columns)
    if problems and columns == SERIES_LAYOUTS[0] and names != columns:
        problems = [
            Problem(
                display,
                problems[0].line,
                "",
                "expected columns date, price (or period, level, observations from `procure index build`)",
            )
        ]
    day_column, price_column = columns[0], columns[1]
    levels: list[IndexLevel] = []
    seen: set[date] = set()
    for line, row in rows:
        day = parse_date(row[day_column], display, line, day_column, problems)
        price = parse_number(row[price_column], display, line, price_column, problems)
        if day is None or price is None:
            continue
        if day in seen:
            problems.append(Problem(display, line, day_column, f"duplicate date {day}"))
            continue
        seen.add(day)
        levels.append(IndexLevel(day, price))
    return sorted(levels, key=lambda level: level.date), problems


def read_series(path: Path, display: str | None = None) -> list[IndexLevel]:
    """A price series file on its own (an index or a rent history named on the command line, market/rent.csv),
    never one written by the same run; raises InputError with every problem."""
    from procure.io.files import own_input

    own_input(path)  # an output of the same run may never replace it
    levels, problems = read_price_series(path, display or str(path))
    if problems:
        raise InputError(problems)
    return levels


def _load_index(root: Path, problems: list[Problem], inputs: list[InputFile]) -> list[IndexLevel]:
    path = root / "market" / "index.csv"
    if not path.exists():
        return []
    display = _display(root, path)
    outside = _outside(root, path)
    if outside:
        problems.append(outside)
        return []
    levels, found = read_price_series(path, display)
    problems.extend(found)
    if not found:
        _record(root, path, read_text(path, display), inputs)
    return levels
