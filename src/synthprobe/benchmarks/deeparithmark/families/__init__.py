"""The fifteen Deep Arithmark families, one module each; importing this package registers them."""

import importlib
import pkgutil

for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_mod}")
