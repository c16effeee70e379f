from . import models
from . import controllers
from . import wizard
from .hooks import post_init_hook, uninstall_hook
from .engine.durable import off_loop, pool_wait

pool_wait.install()  # the gevent server's pools wait for a connection rather than answer 500
off_loop.install()  # and the loop gets the interpreter lock back quickly from work done beside it
