"""Costs per task for machines, costs per 1,000 successful tasks for people.

A cost per successful task is a fraction of a cent (0.00643 USD): every table, Markdown and report
prints it per 1,000 successful tasks (6.43 USD). JSON keeps every per-task field as it was and adds,
beside each, the same figure per 1,000 tasks with the unit in its name: `cost_per_task` ->
`cost_per_1000_tasks`, `p10` (a cost per task) -> `p10_per_1000_tasks`. One rule, applied where a
document is serialized (`PerThousand` below) and where its JSON Schema is written (`schema_companions`),
so that the schema cannot drift from the documents.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, SerializationInfo, SerializerFunctionWrapHandler, model_serializer, model_validator

TASKS = 1000  # tasks in the unit people read
SUFFIX = "_per_task"
COMPANION = "_per_1000_tasks"
UNIT = "per 1,000 successful tasks"


def companion(name: str) -> str:
    """The name of a per-task field's figure per 1,000 tasks: cost_per_task -> cost_per_1000_tasks, p10 ->
    p10_per_1000_tasks."""
    return name[: -len(SUFFIX)] + "_per_1000_tasks" if name.endswith(SUFFIX) else name + "_per_1000_tasks"


def per_thousand(value: Any) -> Any:
    """A cost per task per 1,000 tasks (None stays None; a dict of costs by offer, each scaled)."""
    if isinstance(value, dict):
        return {k: per_thousand(v) for k, v in value.items()}
    return value * TASKS if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def with_companions(data: dict[str, Any], also: tuple[str, ...] = ()) -> dict[str, Any]:
    """The dict with, right after each per-task field (a name ending in _per_task, or one of `also`),
    its figure per 1,000 tasks; a companion already present is kept as it is."""
    if not any(k.endswith(SUFFIX) or k in also for k in data):
        return data
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[key] = value
        if key.endswith(SUFFIX) or key in also:
            name = companion(key)
            if name not in data:
                out[name] = per_thousand(value)
    return out


class PerThousand(BaseModel):
    """A model whose JSON carries, beside each per-task field, the same figure per 1,000 tasks.

    Fields named *_per_task are found by their name; others that are costs per task are listed in
    `PER_TASK`. Dicts of figures keyed by name (the Evaluation's metrics) are listed in `PER_TASK_DICTS`.
    Only JSON gets the companions: Python code reads the per-task figures.
    """

    PER_TASK: ClassVar[tuple[str, ...]] = ()
    PER_TASK_DICTS: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _drop_companions(cls, data: Any) -> Any:
        """A document read back (history, diff of JSON files) loses the companions: they are written, never read."""
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if not k.endswith(COMPANION)}
        for name in cls.PER_TASK_DICTS:
            if isinstance(data.get(name), dict):
                data[name] = {k: v for k, v in data[name].items() if not k.endswith(COMPANION)}
        return data

    @model_serializer(mode="wrap")
    def _per_thousand(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):  # type: ignore[no-untyped-def]  # no return type: the schema stays the model's
        data = handler(self)
        if not info.mode_is_json() or not isinstance(data, dict):
            return data
        for name in self.PER_TASK_DICTS:
            if isinstance(data.get(name), dict):
                data[name] = with_companions(data[name])
        return with_companions(data, self.PER_TASK)


def schema_companions(schema: dict[str, Any], models: dict[str, type[BaseModel]] | None = None) -> dict[str, Any]:
    """A JSON Schema (serialization mode) with each per-task property's companion beside it, as the
    documents carry it: every property named *_per_task, and those a `PerThousand` model lists in
    PER_TASK (its definition found by title)."""
    listed = {m.__name__: m.PER_TASK for m in (models or {}).values() if issubclass(m, PerThousand)}
    dicts = {m.__name__: m.PER_TASK_DICTS for m in (models or {}).values() if issubclass(m, PerThousand)}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                also = listed.get(node.get("title", ""), ())
                for name in dicts.get(node.get("title", ""), ()):
                    if name in props:
                        note = f" Each *_per_task figure has a companion *_per_1000_tasks: the same cost {UNIT}."
                        props[name]["description"] = (props[name].get("description", "") + note).strip()
                added = {}
                for key, prop in props.items():
                    if (key.endswith(SUFFIX) or key in also) and companion(key) not in props:
                        number = {"anyOf": [{"type": "number"}, {"type": "null"}]}
                        shape = (
                            {"type": "object", "additionalProperties": number}
                            if prop.get("type") == "object"
                            else number
                        )
                        added[key] = shape | {"description": f"{key} {UNIT} (x {TASKS:,})"}
                if added:
                    node["properties"] = {
                        k2: v2
                        for k, v in props.items()
                        for k2, v2 in ([(k, v)] + ([(companion(k), added[k])] if k in added else []))
                    }
                    required = node.get("required")
                    if isinstance(required, list):
                        node["required"] = required + [companion(k) for k in added if k in required]
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(schema)
    return schema


def models_in(root: Any) -> dict[str, type[BaseModel]]:
    """Every pydantic model reachable from a model's (or a Union's) field annotations, by class name."""
    import typing

    found: dict[str, type[BaseModel]] = {}

    def walk(tp: Any) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp.__name__ in found:
                return
            found[tp.__name__] = tp
            for f in tp.model_fields.values():
                walk(f.annotation)
            return
        for arg in typing.get_args(tp):
            walk(arg)

    walk(root)
    return found
