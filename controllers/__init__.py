from . import chat_controller
