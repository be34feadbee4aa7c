"""Optimizer checkpoints both ways: state Paddle 3.3.1 saved resumes training in irflow
to Paddle's numbers, and so does state irflow saved before its beta powers took
Paddle's shapes (0-d then). The state below is Paddle's ``opt.state_dict()`` as NumPy
arrays (``irflow.load`` reads no pickle, so no ``.pdopt`` file): it was printed by
Paddle 3.3.1 (CPU) after three steps of the setup in `steps`, with the parameter then
and after three more steps."""
import numpy as np
import pytest

import irflow
from irflow.optimizer import ASGD, Adam, Lamb, NAdam, RAdam, Rprop

from .test_asgd_rprop import Branches

GRADS = [np.array([0.3, -0.2, 0.1], "float32"), np.array([0.2, 0.4, -0.3], "float32"),
         np.array([0.5, 0.1, 0.2], "float32"), np.array([-0.4, 0.3, 0.2], "float32"),
         np.array([0.1, -0.5, 0.3], "float32"), np.array([0.2, 0.2, -0.1], "float32")]
MAKE = {"Adam": lambda ps: Adam(0.1, parameters=ps),
        "NAdam": lambda ps: NAdam(0.1, parameters=ps),
        "RAdam": lambda ps: RAdam(0.1, parameters=ps),
        "Lamb": lambda ps: Lamb(0.1, parameters=ps),
        "ASGD": lambda ps: ASGD(0.1, batch_num=2, parameters=ps),
        "Rprop": lambda ps: Rprop(0.1, parameters=ps)}
# Paddle 3.3.1: (parameter after three steps, state then (without the parameter's
# name), parameter after three more)
PADDLE = {
    "Adam": (
        [0.702929675579071, -1.7639851570129395, 0.37164992094039917],
        {
            "moment1_0": np.array([0.14073246717453003, -0.07351025193929672,
                                   0.024600272998213768], "float32"),
            "moment2_0": np.array([0.0008297734311781824, 0.00043101812480017543,
                                   0.00016779500583652407], "float32"),
            "beta1_pow_acc_0": np.array([0.6560999155044556], "float32"),
            "beta2_pow_acc_0": np.array([0.9960060715675354], "float32"),
        },
        [0.5092765688896179, -1.5541387796401978, 0.18353183567523956]),
    "NAdam": (
        [0.7374237179756165, -1.8384805917739868, 0.3891576826572418],
        {
            "momentum_decay_pow_0": np.array([0.8847359418869019, 0.8847359418869019,
                                              0.8847359418869019], "float32"),
            "beta2_pow_0": np.array([0.9970030784606934, 0.9970030784606934, 0.9970030784606934],
                                    "float32"),
            "mu_product_0": np.array([0.09121427685022354, 0.09121427685022354,
                                      0.09121427685022354], "float32"),
            "moment1_0": np.array([0.14112238585948944, -0.07453303039073944, 0.02565126121044159],
                                  "float32"),
            "moment2_0": np.array([0.0008354330202564597, 0.0004371973918750882,
                                   0.00017492607003077865], "float32"),
        },
        [0.6542773246765137, -1.6705727577209473, 0.22923634946346283]),
    "RAdam": (
        [0.8527578115463257, -1.8842532634735107, 0.47112837433815],
        {
            "beta1_pow_0": np.array([0.7289999127388, 0.7289999127388, 0.7289999127388],
                                    "float32"),
            "beta2_pow_0": np.array([0.9970030784606934, 0.9970030784606934, 0.9970030784606934],
                                    "float32"),
            "rho_0": np.array([998.0136108398438, 998.0136108398438, 998.0136108398438],
                              "float32"),
            "moment1_0": np.array([0.14371582865715027, -0.0757642313838005, 0.027465270832180977],
                                  "float32"),
            "moment2_0": np.array([0.0008654132252559066, 0.0004391921393107623,
                                   0.0001692578662186861], "float32"),
        },
        [0.7901164293289185, -1.8223105669021606, 0.43229594826698303]),
    "Lamb": (
        [0.5449042320251465, -1.6440701484680176, 0.3321625292301178],
        {
            "moment1_0": np.array([0.138007253408432, -0.0712352842092514, 0.023593319579958916],
                                  "float32"),
            "moment2_0": np.array([0.0007970394799485803, 0.0004226660239510238,
                                   0.0001681252906564623], "float32"),
            "beta1_pow_acc_0": np.array([0.6560999155044556], "float32"),
            "beta2_pow_acc_0": np.array([0.9960060715675354], "float32"),
        },
        [0.27481094002723694, -1.3416156768798828, 0.06393712759017944]),
    "ASGD": (
        [0.8519449830055237, -1.8970940113067627, 0.47559797763824463],
        {
            "d_0": np.array([1.0710999965667725, -0.2701200544834137, 0.09204000234603882],
                            "float32"),
            "y_0": np.array([[0.6811000108718872, -0.282120019197464, 0.29603999853134155],
                             [0.39000001549720764, 0.01199999451637268, -0.20399999618530273]],
                            "float32"),
            "m_0": np.array([3], "int64"),
        },
        [0.7959880828857422, -1.7791533470153809, 0.39324498176574707]),
    "Rprop": (
        [0.6359999775886536, -1.850000023841858, 0.3499999940395355],
        {
            "prevs_0": np.array([0.656000018119812, -0.2800000011920929, 0.2800000011920929],
                                "float32"),
            "learning_rates_0": np.array([0.14400000870227814, 0.05000000074505806,
                                          0.05000000074505806], "float32"),
        },
        [0.47759994864463806, -1.6315999031066895, 0.21799999475479126]),
}
# the powers irflow kept 0-d before
OLD_0D_POWERS = {"Adam": ("beta1_pow_acc_0", "beta2_pow_acc_0"),
                 "Lamb": ("beta1_pow_acc_0", "beta2_pow_acc_0"),
                 "NAdam": ("momentum_decay_pow_0", "beta2_pow_0", "mu_product_0"),
                 "RAdam": ("beta1_pow_0", "beta2_pow_0", "rho_0")}


def parameter(value):
    p = irflow.create_parameter([3], "float32")
    p.set_value(irflow.to_tensor(np.array(value, "float32")))
    return p


def steps(p, opt, grads):
    """Paddle's run: loss p.g + 0.1 |p|^2 for each g, a step after each."""
    for g in grads:
        ((p * irflow.to_tensor(g)).sum() + (p * p).sum() * 0.1).backward()
        opt.step()
        opt.clear_grad()


def resumed(name, state):
    """The parameter after Paddle's last three steps from its value after the first
    three and `state` (keyed without the parameter's name), in a fresh optimizer."""
    mid, _, _ = PADDLE[name]
    p = parameter(mid)
    opt = MAKE[name]([p])
    opt.set_state_dict({f"{p.name}_{k}": v for k, v in state.items()})
    steps(p, opt, GRADS[3:])
    return p.numpy()


@pytest.mark.parametrize("name", list(PADDLE))
def test_training_matches_paddle(name):
    mid, state, final = PADDLE[name]
    p = parameter([1.0, -2.0, 0.5])
    opt = MAKE[name]([p])
    steps(p, opt, GRADS[:3])
    np.testing.assert_allclose(p.numpy(), mid, rtol=1e-6)
    got = {k[len(p.name) + 1:]: v.numpy() for k, v in opt.state_dict().items()}
    assert list(got) == list(state)  # Paddle's names, order, shapes and dtypes
    for k, v in state.items():
        assert got[k].shape == v.shape and got[k].dtype == v.dtype, k
        np.testing.assert_allclose(got[k], v, rtol=1e-5, err_msg=k)
    steps(p, opt, GRADS[3:])
    np.testing.assert_allclose(p.numpy(), final, rtol=1e-6)


@pytest.mark.parametrize("name", list(PADDLE))
def test_paddle_state_resumes_to_paddle_numbers(name):
    _, state, final = PADDLE[name]
    np.testing.assert_allclose(resumed(name, state), final, rtol=1e-6)


@pytest.mark.parametrize("name", list(OLD_0D_POWERS))
def test_state_with_0d_powers_still_loads(name):
    _, state, final = PADDLE[name]
    old = {k: (np.asarray(v.flat[0]) if k in OLD_0D_POWERS[name] else v)
           for k, v in state.items()}
    np.testing.assert_allclose(resumed(name, old), final, rtol=1e-6)


def test_state_dict_loaded_after_the_first_step_too():
    """State loaded into an optimizer that has state already replaces it."""
    mid, state, final = PADDLE["Adam"]
    p = parameter(mid)
    opt = Adam(0.1, parameters=[p])
    steps(p, opt, GRADS[:1])
    p.set_value(irflow.to_tensor(np.array(mid, "float32")))
    opt.set_state_dict({f"{p.name}_{k}": v for k, v in state.items()})
    steps(p, opt, GRADS[3:])
    np.testing.assert_allclose(p.numpy(), final, rtol=1e-6)


def test_fresh_optimizer_loads_an_empty_state_dict():
    """Paddle 3.3.1 accepts it: a fresh optimizer has no state to fill."""
    p = parameter([1.0, -2.0, 0.5])
    opt = Adam(0.1, parameters=[p])
    opt.set_state_dict({})
    steps(p, opt, GRADS)
    np.testing.assert_allclose(p.numpy(), PADDLE["Adam"][2], rtol=1e-6)


def test_state_of_other_parameter_names_fails_at_the_first_step():
    """As in Paddle, loaded state waits for the parameters' first updates, which must
    find theirs in it: a checkpoint of other names would otherwise train on from
    fresh state."""
    _, state, _ = PADDLE["Adam"]
    p = parameter([1.0, -2.0, 0.5])
    opt = Adam(0.1, parameters=[p])
    opt.set_state_dict({f"other.w_0_{k}": v for k, v in state.items()})
    with pytest.raises(KeyError, match=f"'{p.name}_moment1_0' is missing"):
        steps(p, opt, GRADS[:1])


def test_state_a_compiled_step_made_shows_once_updated_or_loaded():
    """A compiled step makes the state of a parameter whose gradient exists on some
    runs only before the parameter is updated: it stays out of the state dict until
    an update takes effect, as eagerly, or state is loaded into it."""
    net = Branches()
    opt = Adam(0.1, parameters=net.parameters())

    def step(x):
        loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    compiled = irflow.compile(step, backend="numpy")
    negative, positive = (irflow.to_tensor(np.array([[v, v]], "float32")) for v in (-1.0, 1.0))
    compiled(negative)  # `a` takes no gradient: its state is made, not shown
    a_keys = {f"{p.name}_{acc}_0" for p in net.a.parameters()
              for acc in ("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc")}
    state = opt.state_dict()
    assert len(state) == 8 and not a_keys & set(state)
    loaded = {k: v.numpy() for k, v in state.items()}
    loaded.update({k: np.full([1] if "pow" in k else p.shape, 0.5, "float32")
                   for p in net.a.parameters() for k in a_keys if k.startswith(p.name + "_")})
    opt.set_state_dict(loaded)
    assert set(opt.state_dict()) == set(loaded)
    np.testing.assert_array_equal(opt.state_dict()[net.a.weight.name + "_moment1_0"].numpy(),
                                  np.full([2, 2], 0.5))
    compiled(positive)  # now updated from the loaded state
    assert opt.state_dict()[net.a.weight.name + "_beta1_pow_acc_0"].numpy()[0] == \
        np.float32(0.5) * np.float32(0.9)
