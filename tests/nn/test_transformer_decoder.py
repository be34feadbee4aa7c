"""TransformerDecoderLayer, TransformerDecoder and Transformer against a NumPy
reference of Paddle's computation built from the layers' own parameters;
gradients against finite differences; compiled and converted Transformers
against eager; Paddle's sublayer names and its spelling of attributes."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads
from tests.nn.test_transformer import np_attention, np_encoder_layer, np_layer_norm, np_linear

RNG = np.random.default_rng(12)
B, T, S, D, H, FF = 2, 4, 5, 8, 2, 16


def np_additive(mask):
    """Paddle's reading of a mask: bool/int keep where nonzero, float is added."""
    if mask is None or mask.dtype.kind == "f":
        return mask
    return (mask.astype(np.float64) - 1) * 1e9


def np_decoder_layer(layer, x, memory, tgt_mask=None, memory_mask=None):
    def block(norm, fn, x):
        if layer.normalize_before:
            return x + fn(np_layer_norm(norm, x))
        return np_layer_norm(norm, x + fn(x))

    def ffn(x):
        return np_linear(layer.linear2, np.maximum(np_linear(layer.linear1, x), 0))
    x = block(layer.norm1, lambda h: np_attention(layer.self_attn, h, h, h,
                                                  np_additive(tgt_mask))[0], x)
    x = block(layer.norm2, lambda h: np_attention(layer.cross_attn, h, memory, memory,
                                                  np_additive(memory_mask))[0], x)
    return block(layer.norm3, ffn, x)


def causal(n):
    return np.tril(np.ones((n, n), bool))


def padding(batch, t, s):
    """A [batch, 1, t, s] bool mask that keeps at least the first key."""
    keep = RNG.random((batch, 1, t, s)) > 0.3
    keep[..., 0] = True
    return keep


MASKS = {
    "none": lambda: (None, None),
    "bool broadcast": lambda: (causal(T), padding(B, T, S)),
    "int": lambda: (causal(T).astype(np.int64), padding(B, T, S).astype(np.int32)),
    "float per head": lambda: (RNG.standard_normal((B, H, T, T)).astype(np.float32),
                               np.where(padding(B, T, S), 0.0, -np.inf).astype(np.float32)),
}


def tensors(*arrays):
    return [None if a is None else paddle.to_tensor(a) for a in arrays]


@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("masks", list(MASKS))
def test_decoder_layer_matches_the_reference(normalize_before, masks):
    layer = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0,
                                       normalize_before=normalize_before)
    tgt = RNG.standard_normal((B, T, D)).astype(np.float32)
    memory = RNG.standard_normal((B, S, D)).astype(np.float32)
    tgt_mask, memory_mask = MASKS[masks]()
    out = layer(*tensors(tgt, memory, tgt_mask, memory_mask))
    ref = np_decoder_layer(layer, tgt.astype(np.float64), memory.astype(np.float64),
                           tgt_mask, memory_mask)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)


def test_decoder_stacks_fresh_layers_and_a_final_norm():
    paddle.seed(0)
    layer = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, normalize_before=True)
    norm = nn.LayerNorm(D)
    decoder = nn.TransformerDecoder(layer, 3, norm=norm)
    assert decoder.num_layers == 3 and decoder.norm is norm
    assert decoder.layers[0] is layer and decoder.layers[1].normalize_before
    assert not np.array_equal(decoder.layers[1].linear1.weight.numpy(),
                              layer.linear1.weight.numpy())  # built anew, as in Paddle
    tgt = RNG.standard_normal((B, T, D)).astype(np.float32)
    memory = RNG.standard_normal((B, S, D)).astype(np.float32)
    memory_mask = padding(B, T, S)
    out = decoder(*tensors(tgt, memory, causal(T), memory_mask))
    ref = tgt.astype(np.float64)
    for sub in decoder.layers:
        ref = np_decoder_layer(sub, ref, memory, causal(T), memory_mask)
    np.testing.assert_allclose(out.numpy(), np_layer_norm(norm, ref), rtol=1e-4, atol=1e-5)


def np_transformer(model, src, tgt, src_mask, tgt_mask, memory_mask):
    memory = src
    for layer in model.encoder.layers:
        memory = np_encoder_layer(layer, memory, np_additive(src_mask))
    memory = np_layer_norm(model.encoder.norm, memory)
    out = tgt
    for layer in model.decoder.layers:
        out = np_decoder_layer(layer, out, memory, tgt_mask, memory_mask)
    return np_layer_norm(model.decoder.norm, out)


def transformer_inputs():
    src = RNG.standard_normal((B, S, D)).astype(np.float32)
    tgt = RNG.standard_normal((B, T, D)).astype(np.float32)
    src_mask = padding(B, S, S)
    return src, tgt, src_mask, padding(B, T, S)


@pytest.mark.parametrize("normalize_before", [False, True])
def test_transformer_matches_the_reference(normalize_before):
    model = nn.Transformer(D, H, 2, 2, FF, dropout=0.0, normalize_before=normalize_before)
    src, tgt, src_mask, memory_mask = transformer_inputs()
    tgt_mask = model.generate_square_subsequent_mask(T)
    out = model(*tensors(src, tgt, src_mask), tgt_mask, paddle.to_tensor(memory_mask))
    ref = np_transformer(model, src.astype(np.float64), tgt.astype(np.float64), src_mask,
                         tgt_mask.numpy(), memory_mask)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)


def test_square_subsequent_mask():
    mask = nn.Transformer(D, H, 1, 1, FF).generate_square_subsequent_mask(T)
    assert mask.dtype == paddle.float32 and mask.shape == [T, T]
    np.testing.assert_array_equal(mask.numpy(), np.triu(np.full((T, T), -np.inf), 1))
    length = paddle.to_tensor(3)
    assert nn.Transformer(D, H, 1, 1, FF).generate_square_subsequent_mask(length).shape == \
        [3, 3]


def test_decoder_layer_gradients():
    layer = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0)
    layer.to(dtype="float64")
    mask = paddle.to_tensor(causal(3))
    check_grads(lambda tgt, memory: layer(tgt, memory, tgt_mask=mask),
                RNG.standard_normal((1, 3, 4)), RNG.standard_normal((1, 2, 4)),
                rtol=1e-4, atol=1e-6)


def test_transformer_gradients_reach_source_target_and_parameters():
    model = nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, normalize_before=True)
    model.to(dtype="float64")
    check_grads(lambda src, tgt: model(src, tgt), RNG.standard_normal((1, 2, 4)),
                RNG.standard_normal((1, 3, 4)), rtol=1e-4, atol=1e-6)
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_transformer_matches_eager(backend):
    model = nn.Transformer(D, H, 2, 2, FF)
    model.eval()
    src, tgt, src_mask, memory_mask = transformer_inputs()
    tgt_mask = model.generate_square_subsequent_mask(T)
    inputs = [*tensors(src, tgt, src_mask), tgt_mask, paddle.to_tensor(memory_mask)]
    eager = model(*inputs).numpy()
    compiled = paddle.compile(model, backend=backend)
    np.testing.assert_allclose(compiled(*inputs).numpy(), eager, rtol=1e-5, atol=1e-5)
    spec = [InputSpec([None, None, D]), InputSpec([None, None, D]),
            InputSpec([None, 1, None, None], "bool"), InputSpec([None, None]),
            InputSpec([None, 1, None, None], "bool")]
    static = paddle.jit.to_static(model, input_spec=spec, backend=backend)
    np.testing.assert_allclose(static(*inputs).numpy(), eager, rtol=1e-5, atol=1e-5)
    short = [paddle.to_tensor(src[:1, :3]), paddle.to_tensor(tgt[:1, :2]),
             paddle.to_tensor(src_mask[:1, :, :3, :3]), model.generate_square_subsequent_mask(2),
             paddle.to_tensor(memory_mask[:1, :, :2, :3])]
    np.testing.assert_allclose(static(*short).numpy(), model(*short).numpy(), rtol=1e-5,
                               atol=1e-5)


def attention_keys(prefix, bias=True):
    return [f"{prefix}.{p}_proj.{w}" for p in ("q", "k", "v", "out")
            for w in (("weight", "bias") if bias else ("weight",))]


def decoder_layer_keys(prefix=""):
    return (attention_keys(f"{prefix}self_attn") + attention_keys(f"{prefix}cross_attn")
            + [f"{prefix}{n}.{w}" for n in ("linear1", "linear2", "norm1", "norm2", "norm3")
               for w in ("weight", "bias")])


def test_state_dict_has_paddles_keys_and_loads_a_paddle_shaped_state():
    layer = nn.TransformerDecoderLayer(D, H, FF, bias_attr=[None, False, None])
    assert list(layer.state_dict()) == [k for k in decoder_layer_keys()
                                        if not k.startswith("cross_attn") or "weight" in k]
    model = nn.Transformer(D, H, 1, 2, FF)
    keys = list(model.state_dict())
    encoder_keys = attention_keys("encoder.layers.0.self_attn") + [
        f"encoder.layers.0.{n}.{w}" for n in ("linear1", "linear2", "norm1", "norm2")
        for w in ("weight", "bias")] + ["encoder.norm.weight", "encoder.norm.bias"]
    assert keys == encoder_keys + decoder_layer_keys("decoder.layers.0.") + \
        decoder_layer_keys("decoder.layers.1.") + ["decoder.norm.weight", "decoder.norm.bias"]
    state = {k: RNG.standard_normal(v.shape).astype(np.float32)
             for k, v in model.state_dict().items()}
    model.set_state_dict(state)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), state[key])


def test_transformer_splits_attributes_between_encoder_and_decoder():
    # 2: (attention, feed-forward) for both stacks
    model = nn.Transformer(D, H, 1, 1, FF, bias_attr=[None, False])
    enc, dec = model.encoder.layers[0], model.decoder.layers[0]
    assert enc.self_attn.q_proj.bias is not None and dec.cross_attn.q_proj.bias is not None
    assert enc.linear1.bias is None and dec.linear2.bias is None
    # 3: (self-attention, cross-attention, feed-forward); the encoder takes 1st and 3rd
    model = nn.Transformer(D, H, 1, 1, FF, bias_attr=[None, False, None])
    enc, dec = model.encoder.layers[0], model.decoder.layers[0]
    assert enc.self_attn.q_proj.bias is not None and enc.linear1.bias is not None
    assert dec.cross_attn.q_proj.bias is None and dec.self_attn.q_proj.bias is not None
    # 1: every sublayer
    model = nn.Transformer(D, H, 1, 1, FF, bias_attr=[False])
    assert all("norm" in k for k in model.state_dict() if k.endswith(".bias"))
    with pytest.raises(ValueError, match="1, 2 or 3"):
        nn.Transformer(D, H, 1, 1, FF, weight_attr=[None] * 4)
    with pytest.raises(ValueError, match="expected 3"):
        nn.TransformerDecoderLayer(D, H, FF, weight_attr=[None, None])


def test_decoder_layer_options():
    layer = nn.TransformerDecoderLayer(D, H, FF, dropout=0.2, act_dropout=0.3,
                                       activation="gelu", layer_norm_eps=1e-6)
    assert layer.self_attn.dropout == layer.cross_attn.dropout == 0.2  # attn_dropout=None
    assert layer.dropout.p == 0.3 and layer.dropout3.p == 0.2
    assert layer.norm3._epsilon == 1e-6
    assert layer.activation is paddle.nn.functional.gelu
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerDecoderLayer(D, H, FF, activation="swishy")
    with pytest.raises(ValueError, match="dim_feedforward"):
        nn.TransformerDecoderLayer(D, H, 0)


def test_custom_encoder_and_decoder_replace_the_stacks():
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, FF, dropout=0.0), 1)
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, H, FF, dropout=0.0), 1)
    model = nn.Transformer(D, H, 3, 3, FF, custom_encoder=encoder, custom_decoder=decoder)
    assert model.encoder is encoder and model.decoder is decoder
    assert model.d_model == D and model.nhead == H
    src, tgt, _, _ = transformer_inputs()
    out = model(*tensors(src, tgt))
    ref = decoder(paddle.to_tensor(tgt), encoder(paddle.to_tensor(src)))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)

