from . import base_tool
from . import orm_tool
from . import sales_tools
from . import purchase_tools
from . import inventory_tools
from . import hr_tools
from . import manufacturing_tools
