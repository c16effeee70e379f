from odoo import api, models


class ResGroups(models.Model):
    """A group created or deleted changes who is in which group, and so the
    tools and safety rules of a run (models/run_settings_source.py). Odoo
    empties only its ``groups`` cache then (``res.groups.create``,
    ``unlink``), not the default cache a run's settings are kept in; a
    group's ``write`` empties both already."""
    _inherit = "res.groups"

    @api.model_create_multi
    def create(self, vals_list):
        groups = super().create(vals_list)
        self.env.registry.clear_cache()
        return groups

    def unlink(self):
        result = super().unlink()
        self.env.registry.clear_cache()
        return result
