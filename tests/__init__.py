from . import test_chat_controller
from . import test_llm_providers
