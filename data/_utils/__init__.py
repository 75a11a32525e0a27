"""``torch.utils.data._utils``: the private package torch users import ``collate`` (its
``default_collate_fn_map``) and ``worker`` from; here they are ember.data's own modules."""

import importlib

# not `from . import collate`: ember.data.collate is also the name of the collate function
collate = importlib.import_module("..collate", __package__)
worker = importlib.import_module("..worker", __package__)
