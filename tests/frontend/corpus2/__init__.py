"""The second frontend corpus: 250 user programs written independently of the first
(tests/frontend/corpus), on what is hard to convert: control flow in helpers and
methods, early exits, lists/dicts of tensors grown in loops, hand-written RNN cells
with state on ``self``, greedy and beam decoding, paddle.grad/no_grad/detach inside
compiled code, symbolic shapes, Paddle's static control-flow API, prints and asserts,
whole training steps, and programs that must fail with a ConversionError.

It reuses the first corpus's harness (`common.py` adds `check_fails_in`,
`check_twins` for state that survives a call, and `check_converts_or_fails`).
Programs that fail today are xfail(strict=True) with what goes wrong. To compare with
PaddlePaddle's own to_static:

    python benchmarks/corpus_paddle_bar.py --paddle-python /tmp/paddle-venv2/bin/python \\
        --corpus tests/frontend/corpus2
"""
