"""One module per assignment (or per topic of one: ``sanity`` is 06's first two problems), each registering its
checks with ``@register``.

Importing this package imports every module in it, so adding an assignment's checks is adding one file.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
