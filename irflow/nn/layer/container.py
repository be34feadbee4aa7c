"""Containers of sublayers (`Sequential`, `LayerList`, `LayerDict`) and of
parameters (`ParameterList`, `ParameterDict`)."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ...tensor import Parameter, Tensor
from .layers import Layer


class Sequential(Layer):
    """Runs its sublayers one after another. Built from layers (named "0", "1",
    ...), from ``(name, layer)`` pairs, or from one OrderedDict of them."""

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], OrderedDict):
            layers = tuple(layers[0].items())
        if layers and isinstance(layers[0], list | tuple):
            for name, layer in layers:
                self.add_sublayer(name, layer)
        else:
            for i, layer in enumerate(layers):
                self.add_sublayer(str(i), layer)

    def forward(self, x):
        for layer in self._sub_layers.values():
            x = layer(x)
        return x

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(*list(self._sub_layers.values())[index])
        if isinstance(index, str):
            return self._sub_layers[index]
        return list(self._sub_layers.values())[_position(index, len(self))]

    def __setitem__(self, index: int, layer: Layer) -> None:
        setattr(self, list(self._sub_layers)[_position(index, len(self))], layer)

    def __delitem__(self, index) -> None:
        keys = list(self._sub_layers)
        targets = keys[index] if isinstance(index, slice) else [keys[_position(index, len(keys))]]
        for key in targets:
            delattr(self, key)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())


def _remove_sublayers(layer: Layer) -> None:
    for key in list(layer._sub_layers):
        delattr(layer, key)


def _position(index: int, length: int, what: str = "layers") -> int:
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range for a container of {length} {what}")
    return index % length


class LayerList(Layer):
    """A list of sublayers, registered under "0", "1", ... (no forward of its own)."""

    def __init__(self, sublayers: Iterable[Layer] | None = None):
        super().__init__()
        if sublayers is not None:
            self.extend(sublayers)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return LayerList(list(self._sub_layers.values())[index])
        return self._sub_layers[str(_position(index, len(self)))]

    def __setitem__(self, index: int, layer: Layer) -> None:
        setattr(self, str(_position(index, len(self))), layer)

    def __delitem__(self, index) -> None:
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            del layers[index]
        else:
            del layers[_position(index, len(layers))]
        self._renumber(layers)

    def _renumber(self, layers: list[Layer]) -> None:
        _remove_sublayers(self)
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def append(self, sublayer: Layer) -> "LayerList":
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._renumber(layers)

    def extend(self, sublayers: Iterable[Layer]) -> "LayerList":
        for layer in sublayers:
            self.append(layer)
        return self


class LayerDict(Layer):
    """A dict of named sublayers, in insertion order (no forward of its own)."""

    def __init__(self, sublayers: Mapping[str, Layer] | Iterable | None = None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key: str) -> Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, sublayer: Layer) -> None:
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key: str) -> None:
        self.pop(key)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers)

    def __contains__(self, key: str) -> bool:
        return key in self._sub_layers

    def clear(self) -> None:
        _remove_sublayers(self)

    def pop(self, key: str) -> Layer:
        sublayer = self._sub_layers[key]
        delattr(self, key)
        return sublayer

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers: Mapping[str, Layer] | Iterable) -> None:
        pairs = sublayers.items() if isinstance(sublayers, Mapping) else sublayers
        for key, layer in pairs:
            self.add_sublayer(key, layer)


class ParameterList(Layer):
    """A list of parameters, registered under "0", "1", ... (no forward of its own).
    Assigning to an index copies the value into the parameter there, as Paddle's
    does, so an optimizer holding that parameter sees the new value."""

    def __init__(self, parameters: Iterable[Parameter] | None = None):
        super().__init__()
        if parameters is not None:
            for parameter in parameters:
                self.append(parameter)

    def __getitem__(self, index: int) -> Parameter:
        return self._parameters[str(_position(index, len(self), "parameters"))]

    def __setitem__(self, index: int, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"param should be 'Parameter' or 'Tensor', but received "
                            f"{type(value).__name__}")
        self[index].set_value(value)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, parameter: Parameter) -> "ParameterList":
        self.add_parameter(str(len(self)), parameter)
        return self


class ParameterDict(Layer):
    """A dict of named parameters, in insertion order (no forward of its own), built
    from a mapping, another ParameterDict or (name, parameter) pairs. Assigning to a
    key registers the parameter under it, replacing any there, as Paddle's does."""

    def __init__(self, parameters: Mapping[str, Parameter] | Iterable | None = None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, parameter: Parameter) -> None:
        if not isinstance(parameter, Parameter):
            raise TypeError(f"ParameterDict[{key!r}] must be set to a Parameter, got "
                            f"{type(parameter).__name__}")
        self.add_parameter(key, parameter)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def update(self, parameters: Mapping[str, Parameter] | Iterable) -> None:
        if isinstance(parameters, ParameterDict):
            parameters = [(key, parameters[key]) for key in parameters]
        elif isinstance(parameters, Mapping):
            parameters = parameters.items()
        if not isinstance(parameters, Iterable):
            raise TypeError(f"ParameterDict.update takes a mapping or (name, parameter) "
                            f"pairs, got {type(parameters).__name__}")
        for i, pair in enumerate(parameters):
            if len(pair) != 2:
                raise ValueError(f"ParameterDict.update: element {i} of the pairs has "
                                 f"{len(pair)} items, expected (name, parameter)")
            self[pair[0]] = pair[1]
