"""The models one tool call reaches (spec 000 §7.2): what the safety guard
checks against the agent's allowed and blocked models and what the audit
log records."""
from __future__ import annotations

from ...tools.tool_spec import ToolSpec


def touched_models(env, spec: ToolSpec, params: dict) -> tuple[str, ...]:
    """The ``model`` parameter (generic tools, or any tool that declares
    one), the comodels of the relational fields in its ``values`` at every
    depth of create/update commands (a write can change lines through
    them), and always the tool's declared models (a server action's own
    model included): a ``model`` argument adds to them, never replaces
    them. First the main model."""
    model_name = params.get("model")
    if not isinstance(model_name, str):
        return spec.model_names
    names = [model_name]
    if model_name in env:
        names += sorted(_written_comodels(env[model_name], params.get("values")))
    return tuple(dict.fromkeys([*names, *spec.model_names]))


def _written_comodels(model, values) -> set[str]:
    """Models written through ``values`` of ``model``: the comodels of its
    one2many/many2many fields, at every depth of create/update commands."""
    names = set()
    if not isinstance(values, dict):
        return names
    for name, value in values.items():
        field = model._fields.get(name)
        if field is None or field.type not in ("one2many", "many2many"):
            continue
        names.add(field.comodel_name)
        for command in value if isinstance(value, list) else []:
            if isinstance(command, (list, tuple)) and len(command) >= 3 and command[0] in (0, 1):
                names |= _written_comodels(model.env[field.comodel_name], command[2])
    return names
