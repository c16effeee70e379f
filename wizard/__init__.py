from . import agent_confirm_wizard
from . import agent_webhook_secret_show
