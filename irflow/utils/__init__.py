"""Paddle's ``paddle.utils``: `run_check`, which checks the installation,
`unique_name`, the names of layers and parameters, and the nest functions
(`flatten`, `pack_sequence_as`, `map_structure`...)."""
from . import unique_name
from .install_check import run_check
from .nest import assert_same_structure, flatten, is_sequence, map_structure, pack_sequence_as

__all__ = ["assert_same_structure", "flatten", "is_sequence", "map_structure",
           "pack_sequence_as", "run_check", "unique_name"]
