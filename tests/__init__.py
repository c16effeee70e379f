from . import test_agent_runtime
from . import test_chat_controller
from . import test_hardening
from . import test_llm_adapters
from . import test_llm_bug_reports
from . import test_llm_providers
from . import test_security
from . import test_tool_execution
