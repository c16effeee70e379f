from . import base
from . import llm_provider
from . import agent_tool
from . import agent
from . import agent_thread
from . import agent_thread_message
from . import agent_execution_log
from . import agent_safety_rule
