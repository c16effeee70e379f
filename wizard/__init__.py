from . import agent_confirm_wizard
