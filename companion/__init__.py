"""tabletop-companion: a table-side referee and score keeper.

The package is kept light on import: nothing here starts threads or opens files.
"""

__version__ = "0.1.0"
