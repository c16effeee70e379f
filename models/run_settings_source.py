from odoo import api, models


class AgenticAiRunSettingsSource(models.AbstractModel):
    """A model that runs read their settings from: agents, tools, LLM
    providers, safety rules, and the knowledge sources' agents.

    A run's settings (engine/turn/run_context.py ``agent_settings``) are kept
    between runs by ``agentic.ai.agent._run_settings``, an ``ormcache`` of
    Odoo's default cache: reading them from the records at every run's
    opening was the largest part of it (about 13 ms of SQL and ORM work on
    this project's machines, issue 26 point 5). Creating, changing or
    deleting such a record empties Odoo's default cache
    (``Registry.clear_cache``), which the other Odoo processes of the
    deployment empty too at their next request or cron job (Odoo's cache
    signaling). Odoo empties it itself when a user's groups, a group, an
    access right or a system parameter change, and reloads the registry
    when a module is installed or removed: the other things the settings
    depend on. ``_run_settings_fields`` names the fields whose change counts
    (None: every field)."""
    _name = "agentic.ai.run.settings.source"
    _description = "Record AI agent runs read their settings from"
    _run_settings_fields = None

    def _changes_run_settings(self, vals_list) -> bool:
        fields = self._run_settings_fields
        return fields is None or any(fields & set(vals) for vals in vals_list)

    @api.model_create_multi
    def create(self, vals_list):
        records = super().create(vals_list)
        if self._changes_run_settings(vals_list):
            self.env.registry.clear_cache()
        return records

    def write(self, vals):
        result = super().write(vals)
        if self._changes_run_settings([vals]):
            self.env.registry.clear_cache()
        return result

    def unlink(self):
        result = super().unlink()
        self.env.registry.clear_cache()
        return result
