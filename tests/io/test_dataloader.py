"""DataLoader: default collation into Tensors, batching options, determinism under
paddle.seed, and worker processes (same batches as without, errors that name the
worker and the sample, dead and slow workers) without ever hanging: every worker
test bounds its waits with the DataLoader's timeout."""
import os
import time

import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F
from irflow.context import state
from irflow.io import (BatchSampler, DataLoader, Dataset, IterableDataset, TensorDataset,
                       WorkerError, default_collate_fn, get_worker_info)


class Samples(Dataset):
    """Sample i: a float32 image of i's, a label, a float and a dict."""

    def __init__(self, n=7):
        self.n = n

    def __getitem__(self, i):
        return (np.full([2, 2], i, "float32"), i, i / 2,
                {"id": np.int32(i), "name": f"s{i}"})

    def __len__(self):
        return self.n


def values(loader):
    return [b.numpy().tolist() for b in loader]


def test_default_collation_of_arrays_numbers_and_dicts():
    image, label, half, info = next(iter(DataLoader(Samples(), batch_size=3)))
    assert isinstance(image, paddle.Tensor) and image.shape == [3, 2, 2]
    assert image.dtype == paddle.float32
    assert label.dtype == paddle.int64 and label.numpy().tolist() == [0, 1, 2]
    assert half.dtype == paddle.float64 and half.numpy().tolist() == [0.0, 0.5, 1.0]
    assert info["id"].dtype == paddle.int32 and info["name"] == ["s0", "s1", "s2"]


def test_collation_stacks_tensors_and_checks_fields():
    batch = default_collate_fn([paddle.ones([2]), paddle.zeros([2])])
    assert batch.shape == [2, 2]
    with pytest.raises(RuntimeError, match="numbers of fields"):
        default_collate_fn([(1, 2), (3,)])
    with pytest.raises(TypeError, match="object"):
        default_collate_fn([object()])


def test_batches_lengths_and_drop_last():
    assert len(DataLoader(Samples(7), batch_size=3)) == 3
    loader = DataLoader(Samples(7), batch_size=3, drop_last=True)
    assert len(loader) == 2 and [b[1].numpy().tolist() for b in loader] == [[0, 1, 2],
                                                                            [3, 4, 5]]
    image, label, _, _ = next(iter(DataLoader(Samples(), batch_size=None)))
    assert image.shape == [2, 2] and label == 0  # single samples, numbers kept


def test_custom_collate_fn_and_batch_sampler():
    loader = DataLoader(Samples(4), batch_size=2, collate_fn=lambda b: [s[0] for s in b])
    first = next(iter(loader))
    assert isinstance(first[0], paddle.Tensor) and first[0].shape == [2, 2]
    sampler = BatchSampler(Samples(5), batch_size=4)
    loader = DataLoader(Samples(5), batch_sampler=sampler)
    assert [b[1].numpy().tolist() for b in loader] == [[0, 1, 2, 3], [4]]
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(Samples(), batch_sampler=sampler, batch_size=2)


def test_shuffle_is_deterministic_under_paddle_seed():
    data = TensorDataset([paddle.arange(20)])
    paddle.seed(7)
    first = [b[0].numpy().tolist() for b in DataLoader(data, batch_size=6, shuffle=True)]
    second = [b[0].numpy().tolist() for b in DataLoader(data, batch_size=6, shuffle=True)]
    paddle.seed(7)
    again = [b[0].numpy().tolist() for b in DataLoader(data, batch_size=6, shuffle=True)]
    assert first == again and first != second
    assert sorted(sum(first, [])) == list(range(20))


class Rows(Dataset):
    """Row i: [i, i] (NumPy, so it is data in static mode too)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.full((2,), i, "float32")


def _seeded_draws():
    """A shuffled DataLoader's batches, a RandomSampler's order and a random_split's
    subsets, in that order after paddle.seed(7)."""
    data = Rows(10)
    paddle.seed(7)
    batches = values(DataLoader(data, batch_size=4, shuffle=True))
    order = list(paddle.io.RandomSampler(data))
    first, second = paddle.io.random_split(data, [4, 6])
    return batches, order, [list(first.indices), list(second.indices)]


@pytest.fixture
def static_mode():
    """Static-graph mode for one test, with fresh default programs; left after it."""
    state.default_programs = None
    paddle.enable_static()
    try:
        yield
    finally:
        paddle.disable_static()
        state.default_programs = None


def test_the_data_pipeline_runs_in_static_mode_with_the_eager_seeds(static_mode):
    # Paddle 3.3.1 gives these batches after paddle.enable_static().
    assert values(DataLoader(Rows(4), batch_size=2)) == [[[0.0, 0.0], [1.0, 1.0]],
                                                        [[2.0, 2.0], [3.0, 3.0]]]
    in_static = _seeded_draws()
    paddle.disable_static()
    try:
        in_eager = _seeded_draws()
    finally:
        paddle.enable_static()
    assert in_static == in_eager


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, self.n, step):
            yield np.array([i], "int64")


def test_iterable_dataset():
    assert values(DataLoader(Stream(5), batch_size=2)) == [[[0], [1]], [[2], [3]], [[4]]]
    assert values(DataLoader(Stream(5), batch_size=2, drop_last=True)) == [[[0], [1]],
                                                                          [[2], [3]]]
    with pytest.raises(ValueError, match="shuffled"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(TypeError, match="no length"):
        len(DataLoader(Stream(3)))


def test_training_loop_over_a_loader():
    paddle.seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype("float32")
    y = (x.sum(1) > 0).astype("int64")
    loader = DataLoader(TensorDataset([paddle.to_tensor(x), paddle.to_tensor(y)]),
                        batch_size=16, shuffle=True)
    model = paddle.nn.Linear(3, 2)
    opt = paddle.optimizer.SGD(0.5, parameters=model.parameters())
    losses = []
    for _ in range(5):
        for step, (xb, yb) in enumerate(loader):
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(loss.item())
    assert step == 3 and losses[-1] < losses[0]


# ---------------------------------------------------------------- workers

TIMEOUT = 20  # seconds: a worker test fails rather than hangs


def test_workers_give_the_same_batches_in_the_same_order():
    data = Samples(11)
    paddle.seed(3)
    plain = [b[0].numpy() for b in DataLoader(data, batch_size=3, shuffle=True)]
    paddle.seed(3)
    loader = DataLoader(data, batch_size=3, shuffle=True, num_workers=2, timeout=TIMEOUT)
    workers = [b[0].numpy() for b in loader]
    assert len(plain) == len(workers) == 4
    for a, b in zip(plain, workers):
        np.testing.assert_array_equal(a, b)


def test_the_random_stream_after_a_pass_does_not_depend_on_num_workers():
    def draw_after_a_pass(num_workers):
        paddle.seed(4)
        list(DataLoader(Samples(5), batch_size=2, shuffle=True, num_workers=num_workers,
                        timeout=TIMEOUT))
        return paddle.rand([1]).item()
    assert draw_after_a_pass(0) == draw_after_a_pass(2)


def test_workers_split_an_iterable_dataset():
    loader = DataLoader(Stream(7), batch_size=2, num_workers=2, timeout=TIMEOUT)
    # Requests alternate between the workers (0: 0,2,4,6; 1: 1,3,5).
    assert values(loader) == [[[0], [2]], [[1], [3]], [[4], [6]], [[5]]]


class Seeded(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return np.asarray(paddle.rand([1]).numpy()[0] + 0 * i)


def test_worker_randomness_is_seeded_per_worker_and_by_paddle_seed():
    def run():
        paddle.seed(11)
        return [b.numpy().tolist() for b in DataLoader(Seeded(), batch_size=1, num_workers=2,
                                                       timeout=TIMEOUT)]
    first = run()
    assert first == run()
    assert first[0] != first[1]  # the two workers do not repeat each other's draws


class Failing(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError("sample 5 is corrupt")
        return np.float32(i)


def test_a_worker_error_names_the_worker_the_samples_and_the_cause():
    loader = DataLoader(Failing(), batch_size=2, num_workers=2, timeout=TIMEOUT)
    seen = []
    with pytest.raises(WorkerError) as info:
        for batch in loader:
            seen.append(batch.numpy().tolist())
    assert seen == [[0.0, 1.0], [2.0, 3.0]]  # the batches before the failing one
    message = str(info.value)
    assert "worker 0" in message and "sample indices [4, 5]" in message
    assert "ValueError: sample 5 is corrupt" in message and "__getitem__" in message
    # The loader survives: a new pass starts new workers (and fails the same way).
    with pytest.raises(WorkerError, match="corrupt"):
        list(loader)


def test_a_failing_worker_init_fn_is_reported():
    def init(worker_id):
        raise RuntimeError(f"cannot open the files of worker {worker_id}")
    loader = DataLoader(Samples(4), batch_size=2, num_workers=1, worker_init_fn=init,
                        timeout=TIMEOUT)
    with pytest.raises(WorkerError, match="cannot open the files of worker 0"):
        list(loader)


class Dying(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(7)
        return np.float32(i)


def test_a_dead_worker_is_noticed():
    start = time.monotonic()
    with pytest.raises(WorkerError, match="exited unexpectedly with exit code 7"):
        list(DataLoader(Dying(), batch_size=1, num_workers=2, timeout=TIMEOUT))
    assert time.monotonic() - start < 5


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(0.3)
        return np.float32(i)


def test_timeout_bounds_the_wait_for_a_batch():
    with pytest.raises(WorkerError, match="timed out.*0.1 s"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.1))


def test_breaking_out_early_stops_the_workers():
    loader = DataLoader(Samples(40), batch_size=2, num_workers=2, timeout=TIMEOUT)
    it = iter(loader)
    next(it)
    workers = it._workers
    del it
    for w in workers:
        w.join(5)
        assert not w.is_alive()


def test_a_batch_that_cannot_be_sent_fails_in_the_worker_with_the_reason():
    loader = DataLoader(Samples(2), batch_size=2, num_workers=1, timeout=TIMEOUT,
                        collate_fn=lambda batch: (lambda: batch))  # a function: no pickle
    with pytest.raises(WorkerError, match="(?s)worker 0 failed.*pickle"):
        list(loader)


def test_workers_without_batching():
    loader = DataLoader(Samples(3), batch_size=None, num_workers=2, timeout=TIMEOUT,
                        persistent_workers=True)
    samples = list(loader)
    assert [s[1] for s in samples] == [0, 1, 2]  # numbers stay numbers
    assert samples[2][0].shape == [2, 2] and samples[2][3]["name"] == "s2"


def test_batches_from_workers_feed_layers():
    # A worker's arrays arrive unpickled, with dtype objects equal to but distinct
    # from NumPy's own; the Tensors made from them must mix with others.
    fc = paddle.nn.Linear(2, 3)
    (x,) = next(iter(DataLoader(TensorDataset([paddle.ones([4, 2])]), batch_size=4,
                                num_workers=1, timeout=TIMEOUT)))
    assert fc(x).shape == [4, 3]
