"""LBFGS against Paddle 3.3.1's numbers (its losses, parameters, and its counts of
closure evaluations and iterations) on a small non-quadratic problem, with and
without the strong-Wolfe line search; and its eager-only contract."""
import numpy as np
import pytest

import irflow
from irflow.errors import ConversionError
from irflow.optimizer import LBFGS


def run(steps=1, dtype="float32", **kwargs):
    p = irflow.create_parameter([2], dtype)
    p.set_value(irflow.to_tensor(np.array([1.0, -2.0], dtype)))
    q = irflow.create_parameter([2, 2], dtype)
    q.set_value(irflow.to_tensor(np.array([[0.5, 0.1], [-0.3, 0.8]], dtype)))
    opt = LBFGS(parameters=[p, q], **kwargs)
    target = irflow.to_tensor(np.array([3.0, 1.0], dtype))

    def closure():
        opt.clear_grad()
        loss = ((p - target) ** 2).sum() + (p[0] * p[1]) ** 2 * 0.1 + \
            ((q @ p - target) ** 2).sum() * 0.5 + (q ** 4).sum()
        loss.backward()
        return loss
    losses = [float(opt.step(closure)) for _ in range(steps)]
    state = opt.state_dict()["state"]
    return losses, p.numpy(), q.numpy().ravel(), state["func_evals"], state["n_iter"]


# Paddle 3.3.1: (losses step() returned, p, q flattened, closure evaluations, iterations)
@pytest.mark.parametrize("kwargs, expected", [
    ({"learning_rate": 1.0, "max_iter": 5},
     ([21.730300903320312], [3.007413387298584, 0.4650278687477112],
      [0.7933732271194458, -0.3963804244995117, 0.28645724058151245, -0.0861014723777771],
      5, 5)),
    ({"steps": 3, "learning_rate": 0.1, "max_iter": 4},
     ([21.730300903320312, 12.88124942779541, 4.433088779449463],
      [2.6624879837036133, 0.009377315640449524],
      [0.8144128322601318, 0.22651046514511108, 0.2843158543109894, 0.6214920878410339],
      12, 12)),
    ({"steps": 2, "learning_rate": 0.5, "max_iter": 10, "history_size": 2},
     ([21.730300903320312, 1.0181446075439453], [3.093940019607544, 0.5639978647232056],
      [0.7309861183166504, 0.4110727608203888, 0.2849321961402893, 0.15566429495811462],
      20, 20)),
    ({"learning_rate": 1.0, "max_iter": 20, "line_search_fn": "strong_wolfe"},
     ([21.730300903320312], [3.0892059803009033, 0.566627562046051],
      [0.7310776710510254, 0.41548046469688416, 0.284896582365036, 0.15914742648601532],
      24, 20)),
    ({"steps": 3, "learning_rate": 1.0, "max_iter": 6, "line_search_fn": "strong_wolfe",
      "history_size": 3},
     ([21.730300903320312, 1.1814653873443604, 0.9776384830474854],
      [3.0856730937957764, 0.5599531531333923],
      [0.7356947064399719, 0.4139818251132965, 0.31741011142730713, -0.035487908869981766],
      21, 16)),
    ({"learning_rate": 1.0, "max_iter": 20, "max_eval": 7, "line_search_fn": "strong_wolfe"},
     ([21.730300903320312], [3.082609176635742, 0.5034347772598267],
      [0.7967139482498169, -0.3432183563709259, 0.3202854096889496, -0.0945967584848404],
      7, 6)),
], ids=["fixed_step", "three_steps", "short_history", "strong_wolfe", "wolfe_three_steps",
        "max_eval"])
def test_lbfgs_as_paddle(kwargs, expected):
    losses, p, q, evaluations, iterations = run(**kwargs)
    want_losses, want_p, want_q, want_evaluations, want_iterations = expected
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    np.testing.assert_allclose(p, want_p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q, want_q, rtol=1e-5, atol=1e-5)
    assert (evaluations, iterations) == (want_evaluations, want_iterations)


def test_lbfgs_float64_as_paddle():
    losses, p, q, evaluations, iterations = run(2, "float64", learning_rate=1.0, max_iter=8,
                                                line_search_fn="strong_wolfe")
    # Paddle 3.3.1
    np.testing.assert_allclose(losses, [21.7303, 1.0655256727870692], rtol=1e-12)
    np.testing.assert_allclose(p, [3.0989745526631802, 0.5723999232686933], rtol=1e-12)
    np.testing.assert_allclose(q, [0.7310828939427059, 0.4136763491848624,
                                   0.32445143879506405, -0.0649657322212397], rtol=1e-12)
    assert (evaluations, iterations) == (19, 15)


def test_stops_at_once_when_the_gradient_is_below_tolerance():
    p = irflow.Parameter(np.array([2.0, 3.0]), name="p")
    opt = LBFGS(parameters=[p], tolerance_grad=10.0)
    calls = []

    def closure():
        calls.append(1)
        opt.clear_grad()
        loss = (p ** 2).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 13.0
    assert len(calls) == 1
    np.testing.assert_array_equal(p.numpy(), [2.0, 3.0])


def test_state_dict_round_trip():
    """A second optimizer given the first's state continues as the first does."""
    def problem():
        p = irflow.Parameter(np.array([1.0, -2.0]), name="p")

        def closure():
            p.clear_gradient()
            loss = ((p - 3.0) ** 4).sum() + (p ** 2).sum()
            loss.backward()
            return loss
        return p, closure
    p, closure = problem()
    opt = LBFGS(parameters=[p], max_iter=3)
    opt.step(closure)
    resumed_p, resumed_closure = problem()
    resumed_p.set_value(p.numpy())
    resumed = LBFGS(parameters=[resumed_p], max_iter=3)
    resumed.set_state_dict(opt.state_dict())
    opt.step(closure)
    resumed.step(resumed_closure)
    np.testing.assert_array_equal(resumed_p.numpy(), p.numpy())


def test_step_in_compiled_code_is_a_conversion_error():
    p = irflow.Parameter(np.array([1.0, -2.0]), name="p")
    opt = LBFGS(parameters=[p])

    def closure():
        opt.clear_grad()
        loss = (p ** 2).sum()
        loss.backward()
        return loss

    def train_step():
        return opt.step(closure)
    with pytest.raises(ConversionError, match="LBFGS.step.*eagerly only"):
        irflow.compile(train_step)()


def test_minimize_and_bad_line_search():
    p = irflow.Parameter(np.array([1.0, -2.0]), name="p")
    with pytest.raises(NotImplementedError, match="step\\(closure\\)"):
        LBFGS(parameters=[p]).minimize((p ** 2).sum())
    with pytest.raises(ValueError, match="line_search_fn"):
        LBFGS(parameters=[p], line_search_fn="armijo")
