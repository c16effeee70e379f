{
    "name": "Agentic AI",
    "summary": "Autonomous AI agents that reason, plan and act across Sales, Purchase, Inventory, Accounting, HR "
               "and Manufacturing",
    "version": "19.0.1.4.0",
    "category": "Productivity",
    "author": "agentic_ai contributors",
    "website": "https://github.com/agentic-ai-odoo/agentic_ai",
    "license": "LGPL-3",
    "depends": ["base", "mail", "web"],
    "external_dependencies": {
        "python": ["httpx", "tiktoken", "jsonschema", "markdown-it-py", "numpy", "pypdf", "python-docx",
                   "beautifulsoup4"],
    },
    "data": [
        "security/agentic_ai_security.xml",
        "security/ir.model.access.csv",
        "security/agentic_ai_rules.xml",
        "data/default_tools_data.xml",
        "data/safety_rules_data.xml",
        "data/default_agent_data.xml",
        "data/cron_data.xml",
        "views/llm_provider_views.xml",
        "views/agent_tool_views.xml",
        "views/agent_views.xml",
        "views/agent_thread_views.xml",
        "views/agent_plan_views.xml",
        "views/agent_execution_log_views.xml",
        "views/agent_safety_rule_views.xml",
        "views/res_config_settings_views.xml",
        "views/agent_webhook_views.xml",
        "views/agent_memory_views.xml",
        "views/agent_knowledge_views.xml",
        "wizard/agent_confirm_wizard_views.xml",
        "views/menus.xml",
        "views/chat_action_views.xml",
    ],
    "assets": {
        # Laid out as Odoo's web and mail are: each component's JS, XML and
        # SCSS in its folder; core/ (the store, the stream client, the SCSS
        # variables every component uses) first. The dark theme's rules go
        # into the dark bundle only, as Odoo's own *.dark.scss do.
        "web.assets_backend": [
            "agentic_ai/static/src/core/**/*",
            "agentic_ai/static/src/**/*",
            ("remove", "agentic_ai/static/src/**/*.dark.scss"),
        ],
        "web.assets_web_dark": [
            "agentic_ai/static/src/core/**/*.dark.scss",
            "agentic_ai/static/src/**/*.dark.scss",
        ],
        "web.assets_tests": ["agentic_ai/static/tests/tours/**/*"],
    },
    "post_init_hook": "post_init_hook",
    "uninstall_hook": "uninstall_hook",
    "application": True,
    "installable": True,
}
