# Type stubs of mano.torch (bindings/python/mano/torch.py).
from typing import Any, Iterable, Union

import torch

from mano import Methods, Result

def score(model: Any, loader: Iterable[Any], methods: Methods = None, *, device: Union[None, str, torch.device] = None,
          **options: Any) -> Result: ...
