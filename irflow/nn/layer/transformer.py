"""MultiHeadAttention, the Transformer encoder and decoder (their layers and stacks)
and Transformer, as Paddle's: the same sublayers, in the same order (so
`state_dict()` has Paddle's names), and the same computation.

Attention masks follow Paddle: a bool or int mask keeps the positions that are
True (1) and adds -1e9 to the others; a float mask is added as it is. Either
broadcasts against the scores [batch, heads, q_length, k_length].

Incremental decoding follows Paddle too: `gen_cache` makes the caches, and a layer
given ``cache=`` returns its output together with the updated cache. An attention's
`MultiHeadAttention.Cache` holds the projected keys and values of the positions seen
so far (each step appends its own); a `MultiHeadAttention.StaticCache` holds those
of a fixed key and value (the encoder's memory), computed once.
"""
from __future__ import annotations

import collections

import numpy as np

from ...tensor import concat, full, matmul, reshape, transpose, triu
from ...tensor.manipulation import exact_shape
from .. import functional as F
from .common import Dropout, Linear
from .container import LayerList
from .layers import Layer
from .norm import LayerNorm


def convert_attention_mask(attn_mask, dtype):
    """`attn_mask` as an additive float mask of `dtype` (see the module docstring)."""
    if attn_mask is None or attn_mask.dtype == dtype:
        return attn_mask
    if attn_mask.dtype.is_bool or attn_mask.dtype.is_int:
        return (attn_mask.astype(dtype) - 1.0) * 1e9
    return attn_mask.astype(dtype)


def _attrs_of(attr, n: int) -> list:
    """Paddle's spelling of per-sublayer attributes: one for all, or a list of n."""
    if isinstance(attr, list | tuple):
        if len(attr) != n:
            raise ValueError(f"expected {n} attributes, got {len(attr)}")
        return list(attr)
    return [attr] * n


class MultiHeadAttention(Layer):
    """Attention with `num_heads` heads of embed_dim / num_heads dims each:
    ``forward(query, key=None, value=None, attn_mask=None, cache=None)`` on [batch,
    length, embed_dim] tensors (key and value default to query); returns the output,
    then the attention weights [batch, heads, q_length, k_length] if `need_weights`,
    then the updated cache if one is given (a tuple when more than the output)."""

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, kdim=None,
                 vdim=None, need_weights: bool = False, weight_attr=None, bias_attr=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be positive, got {embed_dim} and "
                             f"{num_heads}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.dropout, self.need_weights = dropout, need_weights
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError("embed_dim must be divisible by num_heads")
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _heads(self, x):
        """[B, L, E] -> [B, heads, L, head_dim]."""
        batch, length = exact_shape(x)[:2]
        return transpose(reshape(x, [batch, length, self.num_heads, self.head_dim]),
                         [0, 2, 1, 3])

    def compute_kv(self, key, value) -> tuple:
        """The projected keys and values, split into heads: [batch, heads, length,
        head_dim] each (what a cache holds)."""
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key, value=None, type=Cache):  # noqa: A002  (Paddle's name)
        """A cache for `forward`: a `StaticCache` of ``compute_kv(key, value)``; or,
        for `Cache`, one holding no positions yet ([batch, heads, 0, head_dim], key
        giving the batch size and dtype) when `value` is None, else ``Cache(key,
        value)`` as given."""
        if type == MultiHeadAttention.StaticCache:
            return self.StaticCache(*self.compute_kv(key, value))
        if value is None:
            empty = full([exact_shape(key)[0], self.num_heads, 0, self.head_dim], 0, key.dtype)
            return self.Cache(empty, empty)
        return self.Cache(key, value)

    def _keys_values(self, key, value, cache) -> tuple:
        """(keys, values, the cache to return): a StaticCache's own, or those of
        key and value, appended to a Cache's (which is renewed with them)."""
        if isinstance(cache, self.StaticCache):
            return cache.k, cache.v, cache
        k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k, v = concat([cache.k, k], axis=2), concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        return k, v, cache

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        key = query if key is None else key
        value = query if value is None else value
        q = self._heads(self.q_proj(query))
        k, v, cache = self._keys_values(key, value, cache)
        product = matmul(q * (self.head_dim ** -0.5), k, transpose_y=True)
        if attn_mask is not None:
            product = product + convert_attention_mask(attn_mask, product.dtype)
        weights = F.softmax(product)
        if self.dropout:
            weights = F.dropout(weights, self.dropout, training=self.training,
                                mode="upscale_in_train")
        out = transpose(matmul(weights, v), [0, 2, 1, 3])
        batch, length = exact_shape(out)[:2]
        out = self.out_proj(reshape(out, [batch, length, self.embed_dim]))
        outs = (out,) + ((weights,) if self.need_weights else ()) + \
            (() if cache is None else (cache,))
        return outs if len(outs) > 1 else out


class _ResidualBlocks(Layer):
    """What the encoder and decoder layers share: the attention sublayers the
    subclass names in `_attentions`, then a feed-forward network (linear1,
    activation, linear2), each wrapped in dropout, a residual connection and layer
    normalization (before the sublayer if `normalize_before`, else after the
    residual). Sublayers are created in Paddle's order, which `state_dict` follows.
    The arguments are kept in `_config`, from which a stack builds its other layers."""

    _attentions: tuple[str, ...]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout=None, act_dropout=None,
                 normalize_before: bool = False, weight_attr=None, bias_attr=None,
                 layer_norm_eps: float = 1e-05):
        super().__init__()
        self._config = dict(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward,
                            dropout=dropout, activation=activation, attn_dropout=attn_dropout,
                            act_dropout=act_dropout, normalize_before=normalize_before,
                            weight_attr=weight_attr, bias_attr=bias_attr,
                            layer_norm_eps=layer_norm_eps)
        if dim_feedforward <= 0:
            raise ValueError(f"dim_feedforward must be positive, got {dim_feedforward}")
        if not hasattr(F, activation):
            raise ValueError(f"activation {activation!r} is not one irflow provides")
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        blocks = len(self._attentions) + 1
        weight_attrs, bias_attrs = _attrs_of(weight_attr, blocks), _attrs_of(bias_attr, blocks)
        for name, w_attr, b_attr in zip(self._attentions, weight_attrs, bias_attrs):
            setattr(self, name, MultiHeadAttention(d_model, nhead, dropout=attn_dropout,
                                                   weight_attr=w_attr, bias_attr=b_attr))
        self.linear1 = Linear(d_model, dim_feedforward, weight_attrs[-1],
                              bias_attr=bias_attrs[-1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, weight_attrs[-1],
                              bias_attr=bias_attrs[-1])
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, layer_norm_eps))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))
        self.activation = getattr(F, activation)

    def _residual(self, x, norm, dropout, sublayer, cache=None, **kwargs) -> tuple:
        """(x + dropout(sublayer(x, **kwargs)), with `norm` applied to the sublayer's
        input (pre-norm) or to the sum (post-norm); the sublayer's updated cache).
        A `cache` is passed on to the sublayer (an attention), which then returns
        (output, updated cache); without one the second result is None."""
        inputs = norm(x) if self.normalize_before else x
        if cache is None:
            out = sublayer(inputs, **kwargs)
        else:
            out, cache = sublayer(inputs, cache=cache, **kwargs)
        out = x + dropout(out)
        return (out if self.normalize_before else norm(out)), cache

    def _feed_forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_ResidualBlocks):
    """Self-attention then a feed-forward network (linear1, activation, linear2),
    each with dropout, a residual connection and layer normalization (before the
    sublayer if `normalize_before`, else after the residual). With a `cache` (from
    `gen_cache`), returns (output, updated cache)."""

    _attentions = ("self_attn",)

    def forward(self, src, src_mask=None, cache=None):
        src_mask = convert_attention_mask(src_mask, src.dtype)
        src, new_cache = self._residual(src, self.norm1, self.dropout1, self.self_attn,
                                        cache, attn_mask=src_mask)
        src = self._residual(src, self.norm2, self.dropout2, self._feed_forward)[0]
        return src if cache is None else (src, new_cache)

    def gen_cache(self, src):
        """An empty `MultiHeadAttention.Cache` for the self-attention (src gives
        the batch size and dtype)."""
        return self.self_attn.gen_cache(src, type=self.self_attn.Cache)


class TransformerDecoderLayer(_ResidualBlocks):
    """Self-attention over the target, cross-attention from the target to the
    encoder's output `memory`, then a feed-forward network, each with dropout, a
    residual connection and layer normalization (before the sublayer if
    `normalize_before`, else after the residual). A list `weight_attr` or
    `bias_attr` has 3 entries: self-attention, cross-attention, feed-forward.
    With a `cache` (from `gen_cache`), returns (output, updated cache)."""

    _attentions = ("self_attn", "cross_attn")

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = convert_attention_mask(memory_mask, memory.dtype)
        incremental, static = (None, None) if cache is None else cache
        tgt, incremental = self._residual(tgt, self.norm1, self.dropout1, self.self_attn,
                                          incremental, attn_mask=tgt_mask)
        tgt, static = self._residual(tgt, self.norm2, self.dropout2, self.cross_attn, static,
                                     key=memory, value=memory, attn_mask=memory_mask)
        tgt = self._residual(tgt, self.norm3, self.dropout3, self._feed_forward)[0]
        return tgt if cache is None else (tgt, (incremental, static))

    def gen_cache(self, memory) -> tuple:
        """(an empty `MultiHeadAttention.Cache` for the self-attention, a
        `MultiHeadAttention.StaticCache` of the cross-attention's keys and values
        of `memory`)."""
        return (self.self_attn.gen_cache(memory, type=self.self_attn.Cache),
                self.cross_attn.gen_cache(memory, memory, type=self.cross_attn.StaticCache))


def _stack(layer, num_layers: int) -> LayerList:
    """`layer`, then num_layers - 1 new layers built with its configuration (freshly
    initialized, not copies, as in Paddle)."""
    return LayerList([layer if i == 0 else type(layer)(**layer._config)
                      for i in range(num_layers)])


class TransformerEncoder(Layer):
    """`num_layers` encoder layers: the one given, then new ones built with its
    configuration (freshly initialized, as in Paddle), and an optional final norm."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _stack(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, src_mask=None, cache=None):
        src_mask = convert_attention_mask(src_mask, src.dtype)
        output, new_caches = src, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                output = layer(output, src_mask=src_mask)
            else:
                output, layer_cache = layer(output, src_mask=src_mask, cache=cache[i])
                new_caches.append(layer_cache)
        if self.norm is not None:
            output = self.norm(output)
        return output if cache is None else (output, new_caches)

    def gen_cache(self, src) -> list:
        """Each layer's `TransformerEncoderLayer.gen_cache`, for ``cache=``."""
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoder(Layer):
    """`num_layers` decoder layers, each attending to the same `memory`: the one
    given, then new ones built with its configuration (freshly initialized, as in
    Paddle), and an optional final norm."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _stack(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = convert_attention_mask(memory_mask, memory.dtype)
        output, new_caches = tgt, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
            else:
                output, layer_cache = layer(output, memory, tgt_mask=tgt_mask,
                                            memory_mask=memory_mask, cache=cache[i])
                new_caches.append(layer_cache)
        if self.norm is not None:
            output = self.norm(output)
        return output if cache is None else (output, new_caches)

    def gen_cache(self, memory, do_zip: bool = False) -> list:
        """Each layer's `TransformerDecoderLayer.gen_cache` (incremental, static)
        pair, for ``cache=``; with `do_zip`, regrouped as [all the incremental
        caches, all the static ones]."""
        cache = [layer.gen_cache(memory) for layer in self.layers]
        return list(zip(*cache)) if do_zip else cache


def _split_attrs(attr) -> tuple:
    """Transformer's `weight_attr` or `bias_attr` as (the encoder layer's, the
    decoder layer's). A list of 1 serves every sublayer; of 2, (attention,
    feed-forward); of 3, (self-attention, cross-attention, feed-forward), the
    encoder taking the first and last."""
    if not isinstance(attr, list | tuple):
        return attr, attr
    if len(attr) == 1:
        return [attr[0]] * 2, [attr[0]] * 3
    if len(attr) == 2:
        return list(attr), [attr[0], attr[0], attr[1]]
    if len(attr) == 3:
        return [attr[0], attr[2]], list(attr)
    raise ValueError(f"expected 1, 2 or 3 attributes, got {len(attr)}")


class Transformer(Layer):
    """An encoder of `num_encoder_layers` layers and a decoder of
    `num_decoder_layers`, each stack ending in a LayerNorm (or `custom_encoder` /
    `custom_decoder` in their place): ``forward(src, tgt, src_mask=None,
    tgt_mask=None, memory_mask=None)`` decodes `tgt` attending to the encoding of
    `src`."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str = "relu", attn_dropout=None,
                 act_dropout=None, normalize_before: bool = False, weight_attr=None,
                 bias_attr=None, custom_encoder=None, custom_decoder=None):
        super().__init__()
        encoder_weight_attr, decoder_weight_attr = _split_attrs(weight_attr)
        encoder_bias_attr, decoder_bias_attr = _split_attrs(bias_attr)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                        attn_dropout, act_dropout, normalize_before,
                                        encoder_weight_attr, encoder_bias_attr),
                num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                        attn_dropout, act_dropout, normalize_before,
                                        decoder_weight_attr, decoder_bias_attr),
                num_decoder_layers, LayerNorm(d_model))
        self.d_model, self.nhead = d_model, nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        src_mask = convert_attention_mask(src_mask, src.dtype)
        memory = self.encoder(src, src_mask=src_mask)
        tgt_mask = convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = convert_attention_mask(memory_mask, memory.dtype)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    def generate_square_subsequent_mask(self, length):
        """A float32 [length, length] mask for `tgt_mask`: 0 on and below the
        diagonal, -inf above, so that position i attends only to positions <= i."""
        return triu(full([length, length], -np.inf), 1)
