from . import models
from . import controllers
from . import wizard
