"""Paddle's ``paddle.nn.functional.flash_attention`` module: the attention of language
models written for Paddle's fused kernel. On the CPU Paddle computes it as
scaled-dot-product attention, and so does irflow (`attention`), so its gradients and
compiled code are those of matmul, softmax and dropout."""
from __future__ import annotations

from .attention import attention, scaled_dot_product_attention

__all__ = ["flash_attention", "scaled_dot_product_attention"]


def flash_attention(query, key, value, dropout: float = 0.0, causal: bool = False,
                    return_softmax: bool = False, *, fixed_seed_offset=None, rng_name: str = "",
                    training: bool = True, name=None, softmax_scale=None):
    """``(out, weights)``: attention over Paddle's layout [batch, seq, heads, head_dim],
    causal (-1e4 above the diagonal of the scores) if `causal`, the scores scaled by
    `softmax_scale` (default 1/sqrt(head_dim)), the weights dropped out with
    probability `dropout` when `training`; `weights` ([batch, heads, seq_q, seq_k],
    after dropout) only with `return_softmax`, else None. (Paddle 3.3.1's CPU kernel
    ignores `softmax_scale`; irflow applies it, as documented.) `fixed_seed_offset`
    and `rng_name` choose Paddle's GPU random streams and are accepted as no-ops."""
    out, weights = attention(query, key, value, None, dropout, causal, training,
                             softmax_scale)
    return out, weights if return_softmax else None
