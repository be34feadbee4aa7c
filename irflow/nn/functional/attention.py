"""Scaled dot-product attention, as Paddle's ``paddle.nn.functional`` computes it on
the CPU (its "math" path): composed from matmul, softmax and dropout, so gradients
and compiled code come from those ops."""
from __future__ import annotations

from ...errors import ShapeError
from ...tensor import (full_like, matmul, repeat_interleave, squeeze, transpose, triu,
                       unsqueeze)
from ...tensor.convert import as_tensor
from ...tensor.logic import select
from .activation import softmax
from .common import dropout

# Paddle's causal mask adds this to the scores above the diagonal (not -inf).
_CAUSAL_FILL = -1e4


def _shared_kv_heads(query, key, value, enable_gqa: bool):
    """key and value with each head repeated for the query heads that share it
    (grouped-query attention: query head h reads key head h // groups), checking
    Paddle's head-count rules."""
    q_heads, k_heads, v_heads = query.shape[2], key.shape[2], value.shape[2]
    if not enable_gqa:
        if not q_heads == k_heads == v_heads:
            raise ShapeError(f"scaled_dot_product_attention: with enable_gqa=False, query, key "
                             f"and value must have the same number of heads, got {q_heads}, "
                             f"{k_heads} and {v_heads}")
        return key, value
    if k_heads != v_heads or k_heads and q_heads % k_heads:
        raise ShapeError(f"scaled_dot_product_attention: key and value must have the same "
                         f"number of heads, dividing the query's; got query {q_heads}, key "
                         f"{k_heads}, value {v_heads}")
    groups = q_heads // k_heads if k_heads else 1
    if groups == 1:
        return key, value
    return repeat_interleave(key, groups, axis=2), repeat_interleave(value, groups, axis=2)


def _additive_mask(attn_mask, dtype):
    """A bool mask keeps the True positions and sets the others to -inf (a row with
    none kept gives NaN, as in Paddle); any other mask is added as it is."""
    attn_mask = as_tensor(attn_mask)
    if not attn_mask.dtype.is_bool:
        return attn_mask
    zero = full_like(attn_mask, 0.0, dtype=dtype)
    return select(attn_mask, zero, full_like(attn_mask, float("-inf"), dtype=dtype))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, training: bool = True, backend=None,
                                 scale=None, enable_gqa: bool = True, name=None):
    """softmax(Q K^T * scale + mask) V on Paddle's layout [batch, seq, heads, head_dim]
    (or [seq, heads, head_dim]); scale defaults to 1/sqrt(head_dim). `attn_mask`
    broadcasts against the scores [batch, heads, seq_q, seq_k]. `is_causal` adds
    -1e4 above the diagonal and ignores `attn_mask`, as Paddle's CPU path does.
    `dropout_p` drops attention weights only when `training`."""
    return attention(query, key, value, attn_mask, dropout_p, is_causal, training, scale,
                     enable_gqa)[0]


def attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
              is_causal: bool = False, training: bool = True, scale=None,
              enable_gqa: bool = True):
    """`scaled_dot_product_attention`'s output and the attention weights it applied
    ([batch, heads, seq_q, seq_k], after dropout; without the batch for 3-D inputs)."""
    query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
    batched = query.ndim == 4
    if not batched:
        query, key, value = unsqueeze(query, 0), unsqueeze(key, 0), unsqueeze(value, 0)
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ShapeError(f"scaled_dot_product_attention: query, key and value must all be "
                         f"3-D or 4-D, got shapes {query.shape}, {key.shape}, {value.shape}")
    key, value = _shared_kv_heads(query, key, value, enable_gqa)
    head_dim = query.shape[-1]
    scale = scale or (head_dim ** -0.5 if head_dim else 1.0)
    q, k, v = (transpose(t, [0, 2, 1, 3]) for t in (query, key, value))
    scores = matmul(q * scale, k, transpose_y=True)
    if is_causal:
        scores = scores + triu(full_like(scores, _CAUSAL_FILL), 1)
    elif attn_mask is not None:
        scores = scores + _additive_mask(attn_mask, scores.dtype)
    weights = softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=training)
    out = transpose(matmul(weights, v), [0, 2, 1, 3])
    return (out, weights) if batched else (squeeze(out, 0), squeeze(weights, 0))
