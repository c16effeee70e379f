from odoo import api, models

from ..engine.guard.operation_guard import active_guard


class Base(models.AbstractModel):
    """Every create, write and unlink, of every model, asks the safety
    guard of the tool call that is running, if any (engine/guard/operation_guard.py).
    Outside a tool call this is one lookup of a context variable."""
    _inherit = "base"

    @api.model_create_multi
    def create(self, vals_list):
        guard = active_guard()
        if guard is not None:
            guard.check(self, "create", {name: value for vals in reversed(vals_list) for name, value in vals.items()})
        return super().create(vals_list)

    def write(self, vals):
        guard = active_guard()
        if guard is not None and self:
            guard.check(self, "write", vals)
        return super().write(vals)

    def unlink(self):
        guard = active_guard()
        if guard is not None and self:
            guard.check(self, "unlink", {})
        return super().unlink()
