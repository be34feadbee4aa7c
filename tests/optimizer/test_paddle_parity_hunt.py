"""Differences from Paddle 3.3.1 found by running the same scripts under Paddle and
irflow (optimizers, learning-rate schedulers, metrics, paddle.Model), now matched.
Every expected number below was printed by real Paddle 3.3.1 (CPU) on the same
inputs. Differences kept on purpose are not here: float64 parameters take exact
hyperparameters (see `irflow.optimizer.optimizer`), and bad arguments raise irflow's
specific errors (ValueError, TypeError, KeyError) where Paddle asserts."""
import numpy as np
import pytest

import irflow as paddle

# ---------------------------------------------------------------- optimizers


def _three_steps(opt_name, **kwargs):
    p = paddle.create_parameter([3], "float32")
    p.set_value(paddle.to_tensor(np.array([1.0, -2.0, 0.5], "float32")))
    opt = getattr(paddle.optimizer, opt_name)(0.1, parameters=[p], **kwargs)
    grads = [np.array([0.3, -0.2, 0.1], "float32"), np.array([0.2, 0.4, -0.3], "float32"),
             np.array([0.5, 0.1, 0.2], "float32")]
    for g in grads:
        ((p * paddle.to_tensor(g)).sum() + (p * p).sum() * 0.1).backward()
        opt.step()
        opt.clear_grad()
    return p.numpy()


def test_asgd():
    # Paddle 3.3.1
    np.testing.assert_allclose(_three_steps("ASGD", batch_num=2),
                               [0.8519449830055237, -1.8970940113067627,
                                0.47559797763824463], rtol=1e-6)


def test_rprop():
    # Paddle 3.3.1
    np.testing.assert_allclose(_three_steps("Rprop"),
                               [0.6359999775886536, -1.850000023841858,
                                0.3499999940395355], rtol=1e-6)


def test_lbfgs():
    p = paddle.create_parameter([2], "float32")
    p.set_value(paddle.to_tensor(np.array([1.0, -2.0], "float32")))
    opt = paddle.optimizer.LBFGS(learning_rate=1.0, max_iter=5, parameters=[p])
    target = paddle.to_tensor(np.array([3.0, 1.0], "float32"))

    def closure():
        opt.clear_grad()
        loss = ((p - target) ** 2).sum() + (p[0] * p[1]) ** 2 * 0.1
        loss.backward()
        return loss

    loss = opt.step(closure)
    # Paddle 3.3.1: (13.399999618530273, [2.913987636566162, 0.5643197894096375])
    assert float(loss) == pytest.approx(13.399999618530273, rel=1e-6)
    np.testing.assert_allclose(p.numpy(), [2.913987636566162, 0.5643197894096375],
                               rtol=1e-5)


# ---------------------------------------------------------------- optimizer state


def _weight_state_shapes(opt_cls):
    lin = paddle.nn.Linear(2, 2)
    opt = opt_cls(0.1, parameters=lin.parameters())
    lin(paddle.ones([1, 2])).sum().backward()
    opt.step()
    prefix = lin.weight.name + "_"
    return {k[len(prefix):]: list(v.shape) for k, v in opt.state_dict().items()
            if k.startswith(prefix)}


def test_adam_beta_pow_state_shape():
    shapes = _weight_state_shapes(paddle.optimizer.Adam)
    # Paddle 3.3.1: {'moment1_0': [2, 2], 'moment2_0': [2, 2], 'beta1_pow_acc_0': [1],
    #                'beta2_pow_acc_0': [1]}
    assert shapes["beta1_pow_acc_0"] == [1] and shapes["beta2_pow_acc_0"] == [1]


@pytest.mark.parametrize("name, keys", [
    ("NAdam", ["momentum_decay_pow_0", "beta2_pow_0", "mu_product_0"]),
    ("RAdam", ["beta1_pow_0", "beta2_pow_0", "rho_0"]),
])
def test_nadam_radam_pow_state_shape(name, keys):
    shapes = _weight_state_shapes(getattr(paddle.optimizer, name))
    # Paddle 3.3.1: [2, 2] for each of them
    assert [shapes[k] for k in keys] == [[2, 2]] * 3


def test_nadam_loads_full_shape_pows():
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.NAdam(0.1, parameters=lin.parameters())
    state = {}
    for p in lin.parameters():
        for acc in ("moment1", "moment2"):
            state[f"{p.name}_{acc}_0"] = paddle.zeros(p.shape)
        for acc, v in (("momentum_decay_pow", 0.96), ("beta2_pow", 0.999),
                       ("mu_product", 0.9)):
            state[f"{p.name}_{acc}_0"] = paddle.full(p.shape, v)
    opt.set_state_dict(state)  # Paddle 3.3.1: accepted
    lin(paddle.ones([1, 2])).sum().backward()
    opt.step()  # the first step makes the state from it
    assert opt.state_dict()[lin.weight.name + "_mu_product_0"].shape == [2, 2]


def test_state_dict_only_holds_updated_parameters():
    lin, unused = paddle.nn.Linear(2, 2), paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.Adam(0.1, parameters=lin.parameters() + unused.parameters())
    assert len(opt.state_dict()) == 0  # Paddle 3.3.1: 0 before the first step
    lin(paddle.ones([1, 2])).sum().backward()
    opt.step()
    # Paddle 3.3.1: no state for the parameters that never had a gradient
    assert not any(k.startswith((unused.weight.name + "_", unused.bias.name + "_"))
                   for k in opt.state_dict())


def test_lambda_decay_loads_without_lr_scheduler_entry():
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.Adam(paddle.optimizer.lr.LambdaDecay(0.1, lambda e: 0.5 ** e),
                                parameters=lin.parameters())
    lin(paddle.ones([1, 2])).sum().backward()
    opt.step()
    state = {k: v for k, v in opt.state_dict().items() if k != "LR_Scheduler"}
    opt2 = paddle.optimizer.Adam(paddle.optimizer.lr.LambdaDecay(0.1, lambda e: 0.5 ** e),
                                 parameters=lin.parameters())
    opt2.set_state_dict(state)
    assert opt2.get_lr() == 0.1  # Paddle 3.3.1: 0.1


# ---------------------------------------------------------------- hapi


def test_callback_params_keys():
    xs = np.random.RandomState(0).randn(4, 2).astype("float32")
    ys = np.zeros((4, 1), "int64")

    class Data(paddle.io.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return xs[i], ys[i]

    seen = {}

    class Record(paddle.callbacks.Callback):
        def on_train_begin(self, logs=None):
            seen.update(self.params)

    model = paddle.Model(paddle.nn.Linear(2, 2))
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    model.fit(Data(), batch_size=2, epochs=1, verbose=0, callbacks=[Record()])
    # Paddle 3.3.1: ['batch_size', 'epochs', 'metrics', 'steps', 'verbose']
    assert sorted(seen) == ["batch_size", "epochs", "metrics", "steps", "verbose"]
