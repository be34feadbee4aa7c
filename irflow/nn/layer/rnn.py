"""Recurrent layers: the cells `SimpleRNNCell`, `LSTMCell`, `GRUCell`, the wrappers
`RNN` and `BiRNN` that run a cell over time, and the multi-layer `SimpleRNN`,
`LSTM` and `GRU`, with Paddle's weight layout, parameter names and results.

A cell's weights are ``weight_ih`` [gates * hidden, input] and ``weight_hh``
[gates * hidden, hidden] with biases ``bias_ih`` and ``bias_hh`` [gates * hidden],
gates in Paddle's order (LSTM: input, forget, cell, output; GRU: reset, update,
candidate), all initialized Uniform(-1/sqrt(hidden), 1/sqrt(hidden)). A multi-layer
network is a LayerList of `RNN`/`BiRNN` layers ("0", "1", ...), and, as in Paddle, it
also registers every cell parameter under its flat name (``weight_ih_l0``,
``bias_hh_l1_reverse``...), so that `state_dict()` holds both spellings.

The time loop is a Python loop over the steps when their number is static (eagerly,
and compiled with a static time dim); with a symbolic time dim the loop is converted
by the frontend into a tensor loop. With ``sequence_length`` each sequence stops at
its length: the states stop changing beyond it, and the reverse direction reads each
sequence backwards from its own last step. The outputs beyond the length are zero
from `SimpleRNN`, `LSTM` and `GRU` (Paddle's fused rnn op) but the cell's outputs
there from `RNN` and `BiRNN` (as Paddle's, which run the cell step by step), and from
an `LSTM` with `proj_size`, which Paddle runs step by step too.
"""
from __future__ import annotations

import math

from ...tensor import (arange, concat, full, matmul, reshape, sigmoid, split, stack, tanh,
                       transpose, unsqueeze)
from ...tensor import math as tensor_math
from ...tensor.convert import get_default_dtype
from ...tensor.logic import select
from ...tensor.manipulation import exact_shape, flip
from .. import functional as F
from ..initializer import Constant, Uniform
from .container import LayerList
from .layers import Layer


# ---------------------------------------------------------------- cells

class RNNCellBase(Layer):
    """A cell: one time step, ``cell(inputs, states) -> (outputs, new_states)``.

    As Paddle's, the base holds no weights, so that a user's cell subclasses it
    with its own constructor; its `get_initial_states` builds states from the
    cell's `state_shape` (and `state_dtype`), the properties a subclass defines."""

    @property
    def state_shape(self):
        """The (possibly nested) shape of the states, without the batch dim."""
        raise NotImplementedError(f"{type(self).__name__}: add an implementation for "
                                  f"`state_shape` to the cell")

    @property
    def state_dtype(self):
        """The (possibly nested) dtype of the states, or one for all of them."""
        raise NotImplementedError(f"{type(self).__name__}: add an implementation for "
                                  f"`state_dtype` to the cell")

    def get_initial_states(self, batch_ref, shape=None, dtype=None, init_value=0.0,
                           batch_dim_idx=0):
        """States filled with `init_value`, for a batch like `batch_ref`'s (its first
        tensor if nested): one per shape of `shape` (default `state_shape`), each
        [batch, *shape] (a shape's leading -1 standing for the batch), of `dtype`
        (default `state_dtype`, else `batch_ref`'s float dtype, else the default
        dtype)."""
        while isinstance(batch_ref, tuple | list):
            batch_ref = batch_ref[0]
        batch = exact_shape(batch_ref)[batch_dim_idx]
        dtype = dtype or self._default_state_dtype(batch_ref)
        return _map_shapes(
            lambda size, kind: full([batch, *(size[1:] if size[:1] == [-1] else size)],
                                    init_value, kind),
            self.state_shape if shape is None else shape, dtype)

    def _default_state_dtype(self, batch_ref):
        try:
            return self.state_dtype
        except NotImplementedError:
            return batch_ref.dtype if batch_ref.dtype.is_float else get_default_dtype()


def _map_shapes(fn, shapes, dtypes):
    """fn(shape, dtype) for each shape of the nested `shapes` (a shape being a flat
    list or tuple of ints), with the matching dtype of `dtypes`, or `dtypes` itself
    for them all, in the structure of `shapes`."""
    if all(isinstance(d, int) for d in shapes):
        return fn(list(shapes), dtypes)
    kinds = dtypes if isinstance(dtypes, tuple | list) else [dtypes] * len(shapes)
    return type(shapes)(_map_shapes(fn, part, kind) for part, kind in zip(shapes, kinds))


class _WeightedCell(RNNCellBase):
    """A built-in cell: weights and biases of `_gates` blocks of hidden_size rows."""

    _gates = 1        # blocks of hidden_size rows in the weights
    _state_count = 1  # tensors in a state: h, or (h, c)

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__()
        if hidden_size <= 0:
            raise ValueError(f"hidden_size of {type(self).__name__} must be greater than 0, "
                             f"but now equals to {hidden_size}")
        self.input_size, self.hidden_size = input_size, hidden_size
        rows = self._gates * hidden_size
        self.weight_ih = self._cell_parameter([rows, input_size], weight_ih_attr, False)
        self.weight_hh = self._cell_parameter([rows, self._output_size], weight_hh_attr, False)
        self.bias_ih = self._cell_parameter([rows], bias_ih_attr, True)
        self.bias_hh = self._cell_parameter([rows], bias_hh_attr, True)

    def _cell_parameter(self, shape, attr, is_bias: bool):
        """A weight or bias, Uniform-initialized; or, for an `attr` of False, as in
        Paddle, a frozen one (stop_gradient) of ones for a weight, zeros for a bias,
        so that the cell still computes, and has the parameters Paddle's has."""
        if attr is not False:
            return self.create_parameter(shape, attr, is_bias=is_bias,
                                         default_initializer=self._uniform_init())
        parameter = self.create_parameter(shape, None, is_bias=is_bias,
                                          default_initializer=Constant(0.0 if is_bias else 1.0))
        parameter.stop_gradient = True
        return parameter

    def _uniform_init(self) -> Uniform:
        bound = 1.0 / math.sqrt(self.hidden_size)
        return Uniform(-bound, bound)

    def _state_sizes(self) -> tuple[int, ...]:
        """The width of each state tensor: hidden_size, or (h's, c's) for an LSTM."""
        return (self.hidden_size,) * self._state_count

    @property
    def state_shape(self):
        """(hidden_size,), or for an LSTM ((h's width,), (hidden_size,))."""
        shapes = tuple((size,) for size in self._state_sizes())
        return shapes[0] if self._state_count == 1 else shapes

    @property
    def _output_size(self) -> int:
        """The width of the cell's output, its first state (h), which it reads back."""
        return self._state_sizes()[0]

    def _projections(self, inputs, h):
        """x @ weight_ih^T + bias_ih and h @ weight_hh^T + bias_hh."""
        xi = matmul(inputs, self.weight_ih, transpose_y=True)
        hh = matmul(h, self.weight_hh, transpose_y=True)
        if self.bias_ih is not None:
            xi = xi + self.bias_ih
        if self.bias_hh is not None:
            hh = hh + self.bias_hh
        return xi, hh

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class SimpleRNNCell(_WeightedCell):
    """h' = act(x @ W_ih^T + b_ih + h @ W_hh^T + b_hh), act tanh or relu."""

    def __init__(self, input_size: int, hidden_size: int, activation: str = "tanh",
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, name=None):
        if activation not in ("tanh", "relu"):
            raise ValueError(f"activation for SimpleRNNCell should be tanh or relu, but get "
                             f"{activation}")
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr,
                         bias_ih_attr, bias_hh_attr, name)
        self.activation = activation

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        xi, hh = self._projections(inputs, states)
        h = tanh(xi + hh) if self.activation == "tanh" else tensor_math.relu(xi + hh)
        return h, h

    def extra_repr(self) -> str:
        text = super().extra_repr()
        return text if self.activation == "tanh" else text + f", activation={self.activation}"


class LSTMCell(_WeightedCell):
    """i, f, g, o gates; c' = f * c + i * g, h' = o * tanh(c'). States (h, c).

    With `proj_size` (less than hidden_size), h' is projected to proj_size by
    ``h' @ weight_ho`` (weight_ho [hidden_size, proj_size], made with
    `weight_hh_attr`, as Paddle), and weight_hh reads the projected h: [4 * hidden,
    proj_size]. The initial states are then h [batch, proj_size] and c [batch,
    hidden_size] (Paddle 3.3.1's cell makes h of hidden_size and fails)."""

    _gates = 4
    _state_count = 2

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, proj_size: int = 0,
                 name=None):
        if proj_size < 0:
            raise ValueError(f"proj_size of LSTMCell must not be negative, got {proj_size}")
        if proj_size >= hidden_size > 0:
            raise ValueError(f"proj_size ({proj_size}) of LSTMCell must be smaller than "
                             f"hidden_size ({hidden_size})")
        self.proj_size = proj_size  # before the weights: weight_hh's width depends on it
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr,
                         bias_ih_attr, bias_hh_attr, name)
        if proj_size:
            self.weight_ho = self.create_parameter([hidden_size, proj_size], weight_hh_attr,
                                                   default_initializer=self._uniform_init())

    def _state_sizes(self) -> tuple[int, int]:
        return self.proj_size or self.hidden_size, self.hidden_size

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        h, c = states
        xi, hh = self._projections(inputs, h)
        i, f, g, o = split(xi + hh, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        if self.proj_size:
            h = matmul(h, self.weight_ho)
        return h, (h, c)


class GRUCell(_WeightedCell):
    """r, z gates and candidate c = tanh(x_c + r * h_c); h' = z * h + (1 - z) * c."""

    _gates = 3

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        xi, hh = self._projections(inputs, states)
        x_r, x_z, x_c = split(xi, 3, axis=-1)
        h_r, h_z, h_c = split(hh, 3, axis=-1)
        r = sigmoid(x_r + h_r)
        z = sigmoid(x_z + h_z)
        c = tanh(x_c + r * h_c)
        h = z * states + (1.0 - z) * c
        return h, h


# ---------------------------------------------------------------- running a cell over time

def _map(fn, *structures):
    """fn applied leaf by leaf to tensors or (nested) tuples of them."""
    first = structures[0]
    if isinstance(first, tuple | list):
        return tuple(_map(fn, *parts) for parts in zip(*structures))
    return fn(*structures)


def _time_steps(x):
    """[T, 1] int64: 0, 1, ..., T - 1 for the time-major `x` (T may be symbolic)."""
    steps = exact_shape(x)[0]
    if not isinstance(steps, int):
        from ...tensor.attribute import shape
        steps = shape(x)[0]
    return reshape(arange(steps), [-1, 1])


def _steps_mask(sequence_length, x):
    """[T, B, 1] bool: step t is within sequence b."""
    lengths = reshape(sequence_length, [1, -1]).astype("int64")
    return unsqueeze(_time_steps(x) < lengths, [-1])


def _step(cell, inputs, states, mask, t, kwargs):
    """Step t of `cell` over time-major `inputs`, called with the extra `kwargs`
    given to the `RNN`: (output, new states). `mask` ([T, B, 1] bool or None)
    freezes the states outside each sequence; the output there is the cell's all
    the same, as Paddle's `RNN` gives it (`RNNBase` zeroes it, as Paddle's fused rnn
    op does)."""
    out, new_states = cell(inputs[t], states, **kwargs)
    if mask is None:
        return out, new_states
    keep = mask[t]
    return out, _map(lambda new, old: select(keep, new, old), new_states, states)


def _time_loop(cell, inputs, states, mask, steps, kwargs):
    """Run `cell` over the `steps` (a static number) of time-major `inputs`."""
    outputs = []
    for t in range(steps):
        out, states = _step(cell, inputs, states, mask, t, kwargs)
        outputs.append(out)
    return stack(outputs), states


def _tensor_time_loop(cell, inputs, states, mask, steps, outputs, kwargs):
    """`_time_loop` for a time dim known only when the program runs: converted by the
    frontend into a tensor loop that writes each step's output into `outputs`
    [T, B, hidden] (a list stacked after such a loop would get a length symbol of
    its own, not T)."""
    for t in range(steps):
        out, states = _step(cell, inputs, states, mask, t, kwargs)
        outputs[t] = out
    return outputs, states


def _run(cell, inputs, states, mask, reverse: bool, kwargs):
    """`cell` over time-major `inputs`. Backwards, the whole padded time axis is
    reversed, as in Paddle: each sequence's padding comes first, the states staying
    the initial ones through it, so its steps see the same states as reversing each
    sequence within its length, and the padding's outputs are Paddle's."""
    steps = exact_shape(inputs)[0]
    if reverse:
        inputs = flip(inputs, [0])
        mask = None if mask is None else flip(mask, [0])
    if isinstance(steps, int):
        outputs, states = _time_loop(cell, inputs, states, mask, steps, kwargs)
    else:
        from ...frontend.convert import convert_function
        from ...tensor.attribute import shape
        shape_out = [steps, exact_shape(inputs)[1], _output_width(cell, inputs, states, kwargs)]
        outputs, states = convert_function(_tensor_time_loop)(
            cell, inputs, states, mask, shape(inputs)[0], full(shape_out, 0.0, inputs.dtype),
            kwargs)
    if reverse:
        outputs = flip(outputs, [0])
    return outputs, states


def _output_width(cell, inputs, states, kwargs) -> int:
    """The width of `cell`'s output: a built-in cell's own, a user cell's that of
    its output at the first step (traced only for its shape)."""
    if isinstance(cell, _WeightedCell):
        return cell._output_size
    return exact_shape(cell(inputs[0], states, **kwargs)[0])[-1]


def _time_major(x, time_major: bool):
    return x if time_major else transpose(x, [1, 0, *range(2, x.ndim)])


class RNN(Layer):
    """Runs `cell` over the time steps of its input (backwards if `is_reverse`):
    ``rnn(inputs, initial_states=None, sequence_length=None) -> (outputs,
    final_states)``, inputs [batch, time, ...] (or [time, batch, ...] if time_major).
    Other keyword arguments go to each call of the cell, as Paddle's."""

    def __init__(self, cell: RNNCellBase, is_reverse: bool = False, time_major: bool = False):
        super().__init__()
        self.cell = cell
        self.is_reverse, self.time_major = is_reverse, time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        x = _time_major(inputs, self.time_major)
        if initial_states is None:
            initial_states = self.cell.get_initial_states(x, batch_dim_idx=1)
        mask = None if sequence_length is None else _steps_mask(sequence_length, x)
        outputs, states = _run(self.cell, x, initial_states, mask, self.is_reverse, kwargs)
        return _time_major(outputs, self.time_major), states


class BiRNN(Layer):
    """A forward and a backward `RNN` over the same input, outputs concatenated on the
    last axis, final states as the pair (forward's, backward's). Other keyword
    arguments go to each call of either cell."""

    def __init__(self, cell_fw: RNNCellBase, cell_bw: RNNCellBase, time_major: bool = False):
        super().__init__()
        self.cell_fw, self.cell_bw = cell_fw, cell_bw
        self.time_major = time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        x = _time_major(inputs, self.time_major)
        if isinstance(initial_states, tuple | list) and len(initial_states) != 2:
            raise ValueError(f"BiRNN: initial_states must be a pair (forward's, backward's), "
                             f"got {len(initial_states)} items")
        if initial_states is None:
            initial_states = (self.cell_fw.get_initial_states(x, batch_dim_idx=1),
                              self.cell_bw.get_initial_states(x, batch_dim_idx=1))
        mask = None if sequence_length is None else _steps_mask(sequence_length, x)
        out_fw, st_fw = _run(self.cell_fw, x, initial_states[0], mask, False, kwargs)
        out_bw, st_bw = _run(self.cell_bw, x, initial_states[1], mask, True, kwargs)
        outputs = concat([out_fw, out_bw], axis=-1)
        return _time_major(outputs, self.time_major), (st_fw, st_bw)


# ---------------------------------------------------------------- multi-layer networks

class RNNBase(LayerList):
    """`num_layers` RNN (or BiRNN) layers, dropout between them while training."""

    _cell = SimpleRNNCell

    @property
    def _state_count(self) -> int:
        return self._cell._state_count

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, name=None, **cell_options):
        super().__init__()
        if direction not in ("forward", "bidirect", "bidirectional"):
            raise ValueError("direction should be forward or bidirect (or bidirectional), "
                             f"received direction = {direction}")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.dropout, self.time_major = num_layers, dropout, time_major
        self.num_directions = 1 if direction == "forward" else 2
        attrs = dict(weight_ih_attr=weight_ih_attr, weight_hh_attr=weight_hh_attr,
                     bias_ih_attr=bias_ih_attr, bias_hh_attr=bias_hh_attr, **cell_options)
        size = input_size
        for _ in range(num_layers):
            if self.num_directions == 1:
                self.append(RNN(self._cell(size, hidden_size, **attrs), False, time_major))
            else:
                self.append(BiRNN(self._cell(size, hidden_size, **attrs),
                                  self._cell(size, hidden_size, **attrs), time_major))
            size = self._cells()[-1]._output_size * self.num_directions
        self._register_flat_names()

    def _cells(self) -> list[_WeightedCell]:
        """Every cell, layer by layer, the forward direction's first."""
        return [cell for rnn in self
                for cell in ((rnn.cell,) if self.num_directions == 1
                             else (rnn.cell_fw, rnn.cell_bw))]

    def _register_flat_names(self) -> None:
        """Paddle's flat names of the cell parameters (weight_ih_l0, ...,
        bias_hh_l1_reverse), bound as Paddle binds them: in order, to the parameters
        in order. Each name is its parameter's unless a cell has a projection: then
        each `weight_ho` takes the name after its cell's, shifting the rest (Paddle
        3.3.1's names, kept so that its state dicts load without a mismatch)."""
        names = [f"{kind}_l{index // self.num_directions}"
                 f"{'_reverse' if index % self.num_directions else ''}"
                 for index, cell in enumerate(self._cells())
                 for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        for name, param in zip(names, self.parameters()):
            setattr(self, name, param)

    def forward(self, inputs, initial_states=None, sequence_length=None):
        batch_axis = 1 if self.time_major else 0
        if initial_states is None:
            batch = exact_shape(inputs)[batch_axis]
            count = self.num_layers * self.num_directions
            initial_states = tuple(full([count, batch, size], 0.0, inputs.dtype)
                                   for size in self._cells()[0]._state_sizes())
        elif self._state_count == 1 and not isinstance(initial_states, tuple | list):
            initial_states = (initial_states,)
        states = self._split_states(initial_states)
        finals = []
        for i, rnn in enumerate(self):
            if i > 0 and self.dropout:
                inputs = F.dropout(inputs, self.dropout, training=self.training)
            inputs, final = rnn(inputs, states[i], sequence_length)
            finals.append(final)
        if sequence_length is not None and self._runs_fused_in_paddle():
            steps = _time_major(inputs, self.time_major)
            inputs = _time_major(steps * _steps_mask(sequence_length, steps).astype(inputs.dtype),
                                 self.time_major)
        return inputs, self._concat_states(finals)

    def _runs_fused_in_paddle(self) -> bool:
        """Whether Paddle runs this network with its fused rnn op, which zeroes the
        outputs beyond each sequence's length: unless an LSTM cell has a projection,
        which Paddle runs step by step as `RNN` does, keeping the cell's outputs."""
        return not any(isinstance(cell, LSTMCell) and cell.proj_size
                       for cell in self._cells())

    def _split_states(self, initial_states) -> list:
        """Per layer: the state (or (h, c)) of its direction(s), from the stacked
        [num_layers * num_directions, batch, hidden] tensors."""
        per_index = [tuple(s[i] for s in initial_states)
                     for i in range(self.num_layers * self.num_directions)]
        per_index = [p[0] if self._state_count == 1 else p for p in per_index]
        if self.num_directions == 1:
            return per_index
        return [(per_index[2 * i], per_index[2 * i + 1]) for i in range(self.num_layers)]

    def _concat_states(self, finals):
        flat = [s for f in finals for s in (f if self.num_directions == 2 else (f,))]
        if self._state_count == 1:
            return stack(flat)
        return tuple(stack([s[k] for s in flat]) for k in range(self._state_count))

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.time_major:
            text += f", time_major={self.time_major}"
        if self.dropout:
            text += f", dropout={self.dropout}"
        return text


class SimpleRNN(RNNBase):
    """Multi-layer Elman RNN: ``(outputs, final_states)``, final_states
    [num_layers * num_directions, batch, hidden]."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 activation: str = "tanh", weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, name,
                         activation=activation)


class LSTM(RNNBase):
    """Multi-layer LSTM: ``(outputs, (h, c))``, h and c [num_layers * num_directions,
    batch, hidden]. With `proj_size`, each cell projects its output (see `LSTMCell`):
    the outputs and h have proj_size features (times the directions for the
    outputs)."""

    _cell = LSTMCell

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
                 bias_hh_attr=None, proj_size: int = 0, name=None):
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, name,
                         proj_size=proj_size)


class GRU(RNNBase):
    """Multi-layer GRU: ``(outputs, final_states)``."""

    _cell = GRUCell
