from . import chat_controller
from . import stream_controller
from . import webhook_controller
