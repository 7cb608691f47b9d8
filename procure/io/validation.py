"""Pydantic's errors as one-line problems: each at the line of its field in the file read, in words a buyer reads
(what was expected, what was found), an unknown field with the nearest known name of its place as a suggestion."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from procure.errors import Problem
from procure.io.yamlsafe import Document
from procure.model.inputs import (
    CURRENCY_PATTERN,
    NO_CONTROLS,
    ONE_LINE,
)
from procure.textsafe import TextRefused


def _type_name(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number", bool: "true/false"}.get(
        type(value), type(value).__name__
    )


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
        problems.append(doc.problem(loc, message))
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
