"""Find and load a workspace: procure.yaml, offers/, grades/, performance/ and market/.

Every problem in every file is collected before anything is raised, so that `procure validate`
shows the whole list at once, one line each with file, line and field.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from procure.errors import InputError, Problem, format_field_path
from procure.io.files import check_link, folders_unchanged, protect, register_root
from procure.io.tables import parse_date, parse_number, read_csv_rows
from procure.io.yamlsafe import Document, load_yaml, read_text
from procure.model.inputs import (
    CURRENCY_PATTERN,
    NO_CONTROLS,
    ONE_LINE,
    OPERATING_JOBS,
    PUBLISHED_TIERS,
    RATING_CATEGORIES,
    DemandConfig,
    Grade,
    HedgeConfig,
    Offer,
    ReferenceCurve,
    Reliability,
    UncertaintyConfig,
    WorkspaceConfig,
)
from procure.model.kinds import KINDS, join, kind_of, stated_kinds
from procure.model.rating import evidence_problems
from procure.textsafe import TextRefused

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
            problems.append(
                Problem(
                    doc.display,
                    doc.lines.line_of(("id",)),
                    "id",
                    f"duplicate offer id '{offer.id}' (also in {seen_ids[offer.id]})",
                )
            )
            continue
        seen_ids[offer.id] = doc.display
        offers.append(offer)
        offer_docs[offer.id] = doc
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
        known_offers = {o.id for o in offers}
        by_id = {o.id: o for o in offers}
        hedged = config.hedge.offer
        if offers and hedged is not None and hedged not in known_offers and hedged not in unloaded_ids:
            from procure.errors import unknown_offer

            near = unknown_offer(hedged, known_offers)  # "did you mean", then every known id
            problems.append(
                Problem(config_doc.display, config_doc.lines.line_of(("hedge", "offer")), "hedge.offer", near.message)
            )
        for offer_id, spec in config.uncertainty.offers.items():
            if (
                offers and offer_id not in known_offers and offer_id not in unloaded_ids
            ):  # an invalid offer's own problems are named
                loc = ("uncertainty", "offers", offer_id)
                problems.append(
                    Problem(
                        config_doc.display,
                        config_doc.lines.line_of(loc),
                        format_field_path(loc),
                        f"no offer with this id (known: {', '.join(sorted(known_offers))})",
                    )
                )
            elif offer_id in by_id and by_id[offer_id].per_token and spec.throughput is not None:
                loc = ("uncertainty", "offers", offer_id, "throughput")
                problems.append(
                    Problem(
                        config_doc.display,
                        config_doc.lines.line_of(loc),
                        format_field_path(loc),
                        "a per-token offer has no GPU throughput to vary: its cost per task does not depend on it "
                        "(vary its availability)",
                    )
                )
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
                Problem(
                    doc.display,
                    doc.lines.line_of(loc),
                    format_field_path(loc),
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


def _type_name(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number", bool: "true/false"}.get(
        type(value), type(value).__name__
    )


# --- pydantic errors as one-line problems --------------------------------------------------------


def validation_problems(exc: ValidationError, doc: Document, model: type[BaseModel] | None = None) -> list[Problem]:
    """Turn pydantic's errors into problems with the line of each field; an unknown field gets the
    nearest known name of its place in `model` as a suggestion."""
    problems = []
    for err in exc.errors(include_url=False):
        loc = _strip_union_tags(tuple(err["loc"]), doc.data)
        message = _message(err)
        if err["type"] == "extra_forbidden" and model is not None and loc and isinstance(loc[-1], str):
            close = _closest(loc[-1], _fields_at(model, loc[:-1]))
            if close:
                message = f"unknown field: did you mean {close}? (`procure schema` lists the fields)"
        problems.append(Problem(doc.display, doc.lines.line_of(loc), format_field_path(loc), message))
    return problems


def _strip_union_tags(loc: tuple, data: Any = None) -> tuple:
    """Pydantic names union members in paths (`float`, `constrained-float`, `list[...]`): drop them,
    but keep a key the file really has, even one named `float` or holding `[` (an unknown key is
    then reported with its name, at its own line)."""
    kept: list = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            kept.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            kept.append(part)
            node = node[part]
        elif isinstance(part, str) and (
            part in {"float", "int", "str", "list", "none", "bool", "dict"}
            or "[" in part
            or part.startswith(("constrained-", "function-"))
        ):
            continue  # a union member's name: not in the file
        else:
            kept.append(part)
            node = None
    return tuple(kept)


def _closest(name: str, known: list[str]) -> str | None:
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return close[0] if close else None


def _fields_at(model: type[BaseModel], loc: tuple) -> list[str]:
    """The field names a mapping at `loc` of `model` may hold (empty when the place is not a model)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part) if isinstance(current, type) and issubclass(current, BaseModel) else None
        if field is None:
            return []
        current = _model_in(field.annotation)
        if current is None:
            return []
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model inside an annotation such as `X | None`, `list[X]` or `Annotated[X, ...]`."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _message(err: dict[str, Any]) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    got = err.get("input")
    shown = _show(got)
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field (check the spelling; `procure schema` lists the fields)"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        words = {
            "greater_than": "greater than",
            "greater_than_equal": "at least",
            "less_than": "less than",
            "less_than_equal": "at most",
        }[kind]
        bound = next(iter(ctx.values()))
        return (
            f"must be {words} {bound:g} (got {shown})"
            if isinstance(bound, (int, float))
            else f"must be {words} {bound} (got {shown})"
        )
    if kind == "finite_number":
        return f"must be a finite number (got {shown})"
    if kind in ("float_parsing", "float_type", "int_parsing", "int_type", "int_from_float"):
        expected = "a whole number" if kind.startswith("int") else "a number"
        return f"must be {expected} (got {shown})"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '')} (got {shown})"
    if kind == "string_pattern_mismatch":
        if ctx.get("pattern") == CURRENCY_PATTERN:
            return f"must be a 3-letter currency code in capitals, like USD or EUR (got {shown})"
        if ctx.get("pattern") in (NO_CONTROLS, ONE_LINE):
            from procure.textsafe import text_problem

            found = text_problem(got, ctx.get("pattern") == ONE_LINE) if isinstance(got, str) else None
            return found or "holds characters not allowed in text (line breaks, controls, bidirectional controls)"
        return f"has characters that are not allowed (got {shown}; expected letters, digits, '.', '-', '_')"
    if kind.startswith("date"):
        return f"must be a date like 2026-11-30 (got {shown})"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false (got {shown})"
    if kind in ("string_type",):
        return f"must be text (got {shown})"
    if kind in ("list_type", "tuple_type"):
        return f"must be a list (got {shown})"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"must be a mapping of fields (got {shown})"
    if kind == "value_error" and isinstance(ctx.get("error"), TextRefused):
        return str(ctx["error"])
    if kind == "too_short":
        return f"must have at least {ctx.get('min_length')} item(s)"
    if kind == "too_long":
        return f"is too long (at most {ctx.get('max_length')})"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"is too long (at most {ctx.get('max_length')} characters)"
    return f"{err['msg'][0].lower()}{err['msg'][1:]} (got {shown})"


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- cross-field and cross-file rules ------------------------------------------------------------


MAX_FACTOR = 3.0  # an uncertainty factor of more than 3x the stated figure is a typo (a percentage)

Add = Callable[[tuple, str], None]  # records one problem at a field's location (line and path)


def _problem_list(doc: Document) -> tuple[list[Problem], Add]:
    """A list of problems and the function that adds one, at the line of the field named by its loc."""
    problems: list[Problem] = []

    def add(loc: tuple, message: str) -> None:
        problems.append(Problem(doc.display, doc.lines.line_of(loc), format_field_path(loc), message))

    return problems, add


def _check_config(config: WorkspaceConfig, doc: Document, grades: list[Grade] | None) -> list[Problem]:
    """Rules of procure.yaml that span fields or files, each section's in turn."""
    problems, add = _problem_list(doc)
    _check_config_names(config, grades, add)
    _check_ladder(config.hedge, add)
    _check_uncertainty(config.uncertainty, add)
    _check_index_and_market(config, add)
    _check_published_tiers(config.assumptions.reliability, add)
    if config.demand is not None:
        _check_demand(config, config.demand, add)
    if config.plan.cvar_limit is not None and config.plan.cvar_weight > 0:
        add(("plan", "cvar_limit"), "give a CVaR weight or a CVaR limit, not both")
    _check_bands(config.assumptions.reliability, add)
    return problems


def _check_config_names(config: WorkspaceConfig, grades: list[Grade] | None, add: Add) -> None:
    """Names that must be one of a known list: grades, operating jobs, rating categories and the
    category.criterion paths of critical groups (a misspelt name would otherwise be silently ignored)."""
    known_grades = {g.id for g in grades or []}
    for i, grade_id in enumerate(config.policy.acceptable_grades or []):
        if known_grades and grade_id not in known_grades:
            add(
                ("policy", "acceptable_grades", i),
                f"unknown grade '{grade_id}' (grades/ defines: {', '.join(sorted(known_grades))})",
            )
    for job in config.assumptions.jobs:
        if job not in OPERATING_JOBS:
            add(("assumptions", "jobs", job), f"unknown operating job (expected one of: {', '.join(OPERATING_JOBS)})")
    for job in config.assumptions.self_operated_jobs:
        if job not in OPERATING_JOBS:
            add(
                ("assumptions", "self_operated_jobs", job),
                f"unknown operating job (expected one of: {', '.join(OPERATING_JOBS)})",
            )
    for category in config.rating.categories:
        if category not in RATING_CATEGORIES:
            add(
                ("rating", "categories", category),
                f"unknown rating category (expected one of: {', '.join(RATING_CATEGORIES)})",
            )
    for i, group in enumerate(config.rating.critical):
        for j, path in enumerate(group):
            category, _, key = path.partition(".")
            if category not in RATING_CATEGORIES or not key:
                add(
                    ("rating", "critical", i, j),
                    f"expected category.criterion, e.g. security.soc2_type2 (got {path!r})",
                )


def _check_ladder(hedge: HedgeConfig, add: Add) -> None:
    """The hedge ladder's buckets: each a range of months, none overlapping another (a month hedged
    twice would be bought twice)."""
    ladder = sorted(hedge.ladder, key=lambda b: b.first_month)
    for i, bucket in enumerate(hedge.ladder):
        if bucket.first_month > bucket.last_month:
            add(("hedge", "ladder", i), f"first_month {bucket.first_month} is after last_month {bucket.last_month}")
    for earlier, later in zip(ladder, ladder[1:]):
        if later.first_month <= earlier.last_month:
            add(
                ("hedge", "ladder"),
                (
                    f"buckets {earlier.first_month}-{earlier.last_month} and {later.first_month}-{later.last_month} "
                    "overlap"
                ),
            )
    contract = hedge.contract
    if (
        contract.gpu_hours is not None
        and "contract_gpu_hours" in hedge.model_fields_set
        and contract.gpu_hours != hedge.contract_gpu_hours
    ):
        add(
            ("hedge", "contract", "gpu_hours"),
            f"{contract.gpu_hours:g} differs from hedge.contract_gpu_hours ({hedge.contract_gpu_hours:g}): give the "
            "contract size once",
        )


def _check_uncertainty(unc: UncertaintyConfig, add: Add) -> None:
    """Every uncertainty distribution: exactly one shape, 0 < low <= mode <= high, and factors (1 = as
    stated), not percentages."""
    named = [
        (("uncertainty", key), d)
        for key, d in (
            ("availability", unc.availability),
            ("utilization", unc.utilization),
            ("fte_cost", unc.fte_cost),
            ("index", unc.index),
            ("fx", unc.fx),
            ("production", unc.production),
            ("demand", unc.demand),
            ("stack", unc.stack),
        )
    ]
    named += [(("uncertainty", "throughput", k), d) for k, d in unc.throughput.items()]
    for offer_id, spec in unc.offers.items():
        named += [
            (("uncertainty", "offers", offer_id, k), d)
            for k, d in (("throughput", spec.throughput), ("availability", spec.availability))
            if d is not None
        ]
    for loc, dist in named:
        if (dist.triangular is None) == (dist.uniform is None):
            add(loc, "give exactly one of triangular: [low, mode, high] or uniform: [low, high]")
            continue
        low, mode, high = dist.bounds
        if not 0 < low <= mode <= high:
            add(loc, f"needs 0 < low <= mode <= high (got {low:g}, {mode:g}, {high:g})")
        elif high > MAX_FACTOR:  # 15 for 15%, or 85/100/115 for -15%..+15%, would multiply the cost many times
            add(
                loc,
                f"factors multiply the stated figure (1 = as stated) and stay at most {MAX_FACTOR:g}: got {high:g}, a "
                "percentage? write 0.85, 1.0, 1.15 for -15%..+15%",
            )


def _check_index_and_market(config: WorkspaceConfig, add: Add) -> None:
    """The index's strata and readings and the market's figures: one figure per stratum, per date, per
    competitor and date (a change over no time is no trend), and one source of the index weights."""
    seen_strata: set[tuple[str, str, str]] = set()
    for i, stratum in enumerate(config.index.weights or []):
        key = (stratum.term, stratum.kind, stratum.grade)
        if key in seen_strata:
            add(
                ("index", "weights", i),
                f"stratum {stratum.term} / {stratum.kind} / {stratum.grade} is listed twice: give each stratum one "
                "weight",
            )
        seen_strata.add(key)
    if config.index.weights is not None and config.index.base_period is not None:
        add(
            ("index", "base_period"),
            "the weights are fixed by index.weights: give index.weights or index.base_period, not both",
        )
    seen_readings: set[object] = set()
    for i, reading in enumerate(config.index.readings):
        if reading.date in seen_readings:
            add(("index", "readings", i, "date"), f"a second reading on {reading.date}: give each date one reading")
        seen_readings.add(reading.date)
    seen_points: dict[tuple[str, str, object], int] = {}
    for i, point in enumerate(config.market.competitors):
        first = seen_points.setdefault((point.name, point.figure, point.date), i)
        if first != i:
            add(
                ("market", "competitors", i, "date"),
                f"a second {point.figure} figure for {point.name} on {point.date} (also market.competitors[{first}]): "
                "give each date one figure",
            )
    own_dates: dict[object, int] = {}
    for i, own in enumerate(config.market.own):
        first = own_dates.setdefault(own.date, i)
        if first != i:
            add(
                ("market", "own", i, "date"),
                f"a second figure on {own.date} (also market.own[{first}]): give each date one figure",
            )


def _check_published_tiers(rel: Reliability, add: Add) -> None:
    """The published tiers' factors, best tier first, never rise: a better tier never lowers the factor."""
    published = rel.published
    ordered = [(tier, published[tier]) for tier in PUBLISHED_TIERS if tier in published]
    for (better, high), (worse, low) in zip(ordered, ordered[1:]):
        if low > high:
            add(
                ("assumptions", "reliability", "published", worse),
                f"{worse} ({low:g}) must not be above {better} ({high:g}): a better tier never lowers the factor",
            )


def _check_demand(config: WorkspaceConfig, demand: DemandConfig, add: Add) -> None:
    """The demand: explicit paths or sampled scenarios, not both; path probabilities that add up to 1
    and unique names; a start; and a growth that stays a figure (1, 100% a month, over 120 months is
    6.6e35 times month 1)."""
    if demand.paths is not None:
        if "scenarios" in demand.model_fields_set or "volatility" in demand.model_fields_set:
            add(
                ("demand", "paths"),
                "explicit paths replace sampled scenarios: give paths, or scenarios and volatility, not both",
            )
        total = sum(p.probability for p in demand.paths)
        if abs(total - 1) > 1e-6:
            add(("demand", "paths"), f"probabilities must add up to 1 (got {total:g})")
        names = [p.name for p in demand.paths]
        for i, name in enumerate(names):
            if name in names[:i]:
                add(("demand", "paths", i, "name"), f"duplicate path name '{name}'")
    if demand.start is None and config.workload.tasks_per_month is None:
        add(("demand", "start"), "required when workload.tasks_per_month is absent (tasks in month 1)")
    start = demand.start if demand.start is not None else config.workload.tasks_per_month
    if start is not None:
        from procure.io.yamlsafe import MAX_MAGNITUDE
        from procure.model.demand import horizon_months

        months = horizon_months(config)
        factor = max([p.factor for p in demand.paths], default=1.0) if demand.paths is not None else 1.0
        peak = start * factor * max(1.0, (1 + demand.growth) ** (months - 1))
        if peak > MAX_MAGNITUDE:
            add(
                ("demand", "growth"),
                f"demand grows to {peak:.3g} tasks a month by month {months} ({start:g} x (1 + "
                f"{demand.growth:g})^{months - 1}"
                + (f" x path factor {factor:g}" if factor != 1 else "")
                + f"); no figure exceeds {MAX_MAGNITUDE:.0e}: lower demand.growth, demand.months or demand.start",
            )


def _check_bands(rel: Reliability, add: Add) -> None:
    """The reliability bands: from the highest score down to 0, factors that never fall with a higher
    score, and an unrated factor no better than the middle band's (no evidence never beats the median)."""
    bands = rel.bands
    if not bands:
        add(("assumptions", "reliability", "bands"), "needs at least one [score, factor] band")
    elif [b[0] for b in bands] != sorted((b[0] for b in bands), reverse=True) or min(b[0] for b in bands) != 0:
        add(
            ("assumptions", "reliability", "bands"),
            "bands must be listed from the highest score down and end at score 0",
        )
    else:
        from procure.model.rating import middle_factor

        for i, ((score, factor), (lower, below)) in enumerate(zip(bands, bands[1:])):
            if factor < below:  # as for the published tiers: a better score never lowers the factor
                add(
                    ("assumptions", "reliability", "bands", i),
                    f"the factor {factor:g} at score {score:g} is below {below:g} at score {lower:g}: a higher score "
                    "never lowers the factor",
                )
        if rel.unrated is not None and rel.unrated > middle_factor(rel) + 1e-12:
            add(
                ("assumptions", "reliability", "unrated"),
                f"{rel.unrated:g} is above the middle band's factor {middle_factor(rel):g}: an offer with no rating "
                "evidence may not count better than a median rated one",
            )


def check_offer(
    offer: Offer, doc: Document, config: WorkspaceConfig | None, curve_names: set[str], index: list[IndexLevel]
) -> list[Problem]:
    """Rules that span fields: price basis, responsibilities, curves, currency, dates."""
    problems, add = _problem_list(doc)
    _check_price_basis(offer, add)
    for kind in KINDS:
        kind.checks(offer, add, bool(index))
    if config is not None:
        currency = offer.pricing.currency or config.currency
        if currency != config.currency and currency not in config.assumptions.fx:
            add(
                ("pricing", "currency"),
                f"unknown currency {currency}: add assumptions.fx.{currency} (units of {config.currency} per "
                f"{currency}) to procure.yaml",
            )
        problems.extend(evidence_problems(offer, config.rating, doc.display, doc.lines.line_of))
    problems.extend(responsibility_problems(doc))
    if offer.owned:
        not_customer = [j for j, o in offer.responsibilities.items() if o != "customer" and j in OPERATING_JOBS]
        if not_customer:
            add(
                ("responsibilities",),
                f"an owned cluster is operated by you: every job must be customer (not: {', '.join(not_customer)})",
            )
    _check_commitment(offer, add)
    _check_fees(offer, add)
    _check_performance(offer, curve_names, add)
    return problems


def _check_price_basis(offer: Offer, add: Add) -> None:
    """Exactly one price basis (one offer kind, procure/model/kinds/), and a discount only on a rented GPU-hour
    price; each kind checks what goes with it (`Kind.checks`)."""
    pricing = offer.pricing
    bases = [kind.field for kind in stated_kinds(pricing)]
    if offer.on_demand and not bases:
        pass  # a pure on-demand offer: pricing.burst is its price
    elif len(bases) != 1:
        add(
            ("pricing",),
            f"needs exactly one price basis: {join([kind.field for kind in KINDS], 'or')} "
            f"(got {', '.join(bases) or 'none'})",
        )
    if pricing.discount and not kind_of(pricing).rented:
        add(
            ("pricing", "discount"),
            f"a discount applies to {join(_labels(rented=True), 'and')} prices; fold it into "
            f"{join([kind.field for kind in KINDS if not kind.rented], 'or')} figures",
        )


def _labels(rented: bool) -> list[str]:
    return [kind.label for kind in KINDS if kind.rented == rented]


def _check_commitment(offer: Offer, add: Add) -> None:
    """GPUs, term, SLA, dates and the ways of buying more (burst, commit options, usage billing,
    renewal), where the price basis needs them: the cost model divides by the GPUs and the term."""
    pricing = offer.pricing
    if not offer.per_token:
        if offer.gpus is None:
            add(("gpus",), "required field is missing (committed GPU count)")
        if offer.max_gpus is not None and offer.gpus is not None and offer.max_gpus < offer.gpus:
            add(("max_gpus",), f"must be at least gpus ({offer.gpus}) (got {offer.max_gpus})")
        if offer.gpus == 0 and not offer.max_gpus and pricing.burst is None:
            add(
                ("gpus",),
                "0 committed GPUs needs pricing.burst (a pure on-demand offer) or max_gpus (a commitment without "
                "minimum)",
            )
        supply = offer.supply_gpus
        most = (
            "pricing.burst.max_gpus" if offer.on_demand else "max_gpus"
        )  # an on-demand offer's reserved tiers come from its burst capacity
        for i, option in enumerate(pricing.commit_options):
            if supply and option.gpus > supply:
                add(("pricing", "commit_options", i, "gpus"), f"must be at most {most} ({supply}) (got {option.gpus})")
    if pricing.usage_billed and pricing.burst is not None:
        add(
            ("pricing", "burst"),
            f"an offer billed per {pricing.billed_per} is already pay-as-used up to max_gpus; a burst above a "
            "commitment needs billed_per: month",
        )
    rented = kind_of(pricing).rented
    goes_with = f"goes with {join(_labels(rented=True), 'or')} pricing, not {join(_labels(rented=False), 'or')}"
    if pricing.usage_billed and not rented:
        add(("pricing", "billed_per"), goes_with)
    if offer.contract.renewal_price == "list" and pricing.gpu_hour is None:
        # Only a fixed GPU-hour price has a list price to restart from; the others renew by their own rule.
        add(
            ("contract", "renewal_price"),
            "list goes with a fixed price (pricing.gpu_hour): an index-linked renewal keeps its spread, floor and cap; "
            "per-token and owned offers have no GPU-hour list price",
        )
    for name in ("burst", "commit_options"):
        if getattr(pricing, name) and not rented:
            add(("pricing", name), goes_with)
    limits = offer.service.rate_limits
    if limits is not None and limits.requests_per_minute is None and limits.output_tokens_per_minute is None:
        add(("service", "rate_limits"), "give requests_per_minute, output_tokens_per_minute or both")
    if offer.term_months is None and pricing.owned is None:
        add(("term_months",), "required field is missing (contract term in months)")
    if offer.service.sla is None and not offer.owned:
        add(("service", "sla"), "required field is missing (SLA availability)")
    if offer.valid_until < offer.received:
        add(("valid_until",), f"is before received ({offer.received})")


def _check_fees(offer: Offer, add: Add) -> None:
    """Each fee exactly one kind (once, monthly, gpu_hour, per_tb with tb_per_month), and no per-GPU-hour
    fee on a per-token offer, which has no GPU-hours to charge it on."""
    for i, fee in enumerate(offer.pricing.fees):
        kinds = [k for k in ("once", "monthly", "gpu_hour", "per_tb") if getattr(fee, k) is not None]
        if len(kinds) != 1:
            add(
                ("pricing", "fees", i),
                f"a fee has exactly one of once, monthly, gpu_hour, per_tb (got {', '.join(kinds) or 'none'})",
            )
        if fee.per_tb is not None and fee.tb_per_month is None:
            add(("pricing", "fees", i, "tb_per_month"), "required with per_tb")
        if fee.tb_per_month is not None and fee.per_tb is None:
            add(("pricing", "fees", i, "tb_per_month"), "only goes with per_tb")
        if fee.gpu_hour is not None and offer.per_token:
            add(("pricing", "fees", i, "gpu_hour"), "a per-GPU-hour fee needs GPU-hour pricing, not per-token")


def _check_performance(offer: Offer, curve_names: set[str], add: Add) -> None:
    """A GPU-hour offer needs a curve at the target: its own points or a reference curve that exists (a
    curve file with bad rows is reported on its own; only a missing file is "unknown")."""
    perf = offer.performance
    if not offer.per_token:
        if perf.points is None and perf.reference is None:
            add(("performance",), "needs points [[interactivity, output tok/s/GPU], ...] or a reference curve")
        if perf.reference is not None and perf.reference not in curve_names:
            known = ", ".join(sorted(curve_names)) or "none in performance/"
            add(("performance", "reference"), f"unknown reference curve '{perf.reference}' (known: {known})")


def responsibility_problems(doc: Document) -> list[Problem]:
    """Every operating job named, none unknown; read from the raw file so that these problems are
    reported together with the field problems of the same offer (the model checks the owners)."""
    raw = doc.data.get("responsibilities") if isinstance(doc.data, dict) else None
    if not isinstance(raw, dict):
        return []  # missing or not a mapping: the model reports it
    problems = []
    for job in raw:
        if job not in OPERATING_JOBS:
            loc = ("responsibilities", job)
            problems.append(
                Problem(
                    doc.display,
                    doc.lines.line_of(loc),
                    format_field_path(loc),
                    f"unknown operating job (expected one of: {', '.join(OPERATING_JOBS)})",
                )
            )
    missing = [job for job in OPERATING_JOBS if job not in raw]
    if missing:
        problems.append(
            Problem(
                doc.display,
                doc.lines.line_of(("responsibilities",)),
                "responsibilities",
                f"no owner given for: {', '.join(missing)} (every operating job needs provider, customer or shared)",
            )
        )
    return problems


def _check_grades(grades: list[tuple[Grade, Document]]) -> list[Problem]:
    problems = []
    seen: dict[str, str] = {}
    for grade, doc in grades:
        if grade.id in seen:
            problems.append(
                Problem(
                    doc.display,
                    doc.lines.line_of(("id",)),
                    "id",
                    f"duplicate grade id '{grade.id}' (also in {seen[grade.id]})",
                )
            )
        seen.setdefault(grade.id, doc.display)
        same_rank = [(g, d) for g, d in grades if g.rank == grade.rank and d.display < doc.display]
        if same_rank:
            problems.append(
                Problem(
                    doc.display,
                    doc.lines.line_of(("rank",)),
                    "rank",
                    f"rank {grade.rank} is also {same_rank[0][0].id}'s: each grade needs its own rank (1 = highest)",
                )
            )
        named = [("provider_jobs", i, job) for i, job in enumerate(grade.requires.provider_jobs)]
        named += [("provider_or_shared_jobs", i, job) for i, job in enumerate(grade.requires.provider_or_shared_jobs)]
        for key, i, job in named:
            if job not in OPERATING_JOBS:
                loc = ("requires", key, i)
                problems.append(
                    Problem(
                        doc.display,
                        doc.lines.line_of(loc),
                        format_field_path(loc),
                        f"unknown operating job '{job}' (expected one of: {', '.join(OPERATING_JOBS)})",
                    )
                )
    return problems


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
