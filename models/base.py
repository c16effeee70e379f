from odoo import api, models

from ..engine.guard.operation_guard import active_guard


class Base(models.AbstractModel):
    """Every create, write and unlink, of every model, asks the safety
    guard of the tool call that is running, if any (engine/guard/operation_guard.py),
    and is noted once it returned (the call's ``orm_operation`` log rows).
    Outside a tool call this is one lookup of a context variable."""
    _inherit = "base"

    @api.model_create_multi
    def create(self, vals_list):
        guard = active_guard()
        if guard is None:
            return super().create(vals_list)
        values = {name: value for vals in reversed(vals_list) for name, value in vals.items()}
        guard.check(self, "create", values)
        records = super().create(vals_list)
        guard.note_done(records, "create", values)
        return records

    def write(self, vals):
        guard = active_guard()
        if guard is None or not self:
            return super().write(vals)
        guard.check(self, "write", vals)
        result = super().write(vals)
        guard.note_done(self, "write", vals)
        return result

    def unlink(self):
        guard = active_guard()
        if guard is None or not self:
            return super().unlink()
        guard.check(self, "unlink", {})
        result = super().unlink()
        guard.note_done(self, "unlink", ())
        return result
