"""MultiHeadAttention, TransformerEncoderLayer and TransformerEncoder, as Paddle's:
the same sublayers, in the same order (so `state_dict()` has Paddle's names), and
the same computation.

Attention masks follow Paddle: a bool or int mask keeps the positions that are
True (1) and adds -1e9 to the others; a float mask is added as it is.
"""
from __future__ import annotations

from ...tensor import matmul, reshape, transpose
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


def _pair_of(attr, n: int = 2) -> list:
    """Paddle's spelling of per-sublayer attributes: one for all, or a list of n."""
    if isinstance(attr, list | tuple):
        if len(attr) != n:
            raise ValueError(f"expected {n} attributes, got {len(attr)}")
        return list(attr)
    return [attr] * n


class MultiHeadAttention(Layer):
    """Attention with `num_heads` heads of embed_dim / num_heads dims each:
    ``forward(query, key=None, value=None, attn_mask=None)`` on [batch, length,
    embed_dim] tensors (key and value default to query); returns the output, and
    the attention weights [batch, heads, q_length, k_length] too if `need_weights`."""

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

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        if cache is not None:
            raise NotImplementedError("MultiHeadAttention: cache is not supported by irflow")
        key = query if key is None else key
        value = query if value is None else value
        q = self._heads(self.q_proj(query))
        k = self._heads(self.k_proj(key))
        v = self._heads(self.v_proj(value))
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
        return (out, weights) if self.need_weights else out


class TransformerEncoderLayer(Layer):
    """Self-attention then a feed-forward network (linear1, activation, linear2),
    each with dropout, a residual connection and layer normalization (before the
    sublayer if `normalize_before`, else after the residual)."""

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
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        weight_attrs, bias_attrs = _pair_of(weight_attr), _pair_of(bias_attr)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout,
                                            weight_attr=weight_attrs[0],
                                            bias_attr=bias_attrs[0])
        self.linear1 = Linear(d_model, dim_feedforward, weight_attrs[1], bias_attr=bias_attrs[1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, weight_attrs[1], bias_attr=bias_attrs[1])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        if not hasattr(F, activation):
            raise ValueError(f"activation {activation!r} is not one irflow provides")
        self.activation = getattr(F, activation)

    def forward(self, src, src_mask=None, cache=None):
        if cache is not None:
            raise NotImplementedError("TransformerEncoderLayer: cache is not supported by "
                                      "irflow")
        src_mask = convert_attention_mask(src_mask, src.dtype)
        residual = src
        if self.normalize_before:
            src = self.norm1(src)
        src = residual + self.dropout1(self.self_attn(src, src, src, src_mask))
        if not self.normalize_before:
            src = self.norm1(src)
        residual = src
        if self.normalize_before:
            src = self.norm2(src)
        src = self.linear2(self.dropout(self.activation(self.linear1(src))))
        src = residual + self.dropout2(src)
        if not self.normalize_before:
            src = self.norm2(src)
        return src


class TransformerEncoder(Layer):
    """`num_layers` encoder layers: the one given, then new ones built with its
    configuration (freshly initialized, as in Paddle), and an optional final norm."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm=None):
        super().__init__()
        self.layers = LayerList([encoder_layer if i == 0 else
                                 type(encoder_layer)(**encoder_layer._config)
                                 for i in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, src_mask=None, cache=None):
        if cache is not None:
            raise NotImplementedError("TransformerEncoder: cache is not supported by irflow")
        src_mask = convert_attention_mask(src_mask, src.dtype)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=src_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output
