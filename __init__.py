from . import models
from . import controllers
from . import wizard
from .hooks import post_init_hook, uninstall_hook
