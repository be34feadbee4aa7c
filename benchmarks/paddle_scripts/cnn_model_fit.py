"""A CNN trained with paddle.Model.fit: InputSpecs (one compiled step), shuffled as
Paddle's defaults shuffle, an evaluation every second epoch, then gradient
accumulation and num_iters; a cosine schedule, top-1/top-2 accuracy. Weights come
from NumPy so both frameworks start alike."""
import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F
from paddle.io import Dataset, DataLoader
from paddle.static import InputSpec

rng = np.random.default_rng(0)
class D(Dataset):
    def __init__(s, n):
        s.x = rng.standard_normal((n, 1, 8, 8)).astype('float32')
        s.y = (s.x.mean((1, 2, 3)) > 0).astype('int64')[:, None]
    def __getitem__(s, i): return s.x[i], s.y[i]
    def __len__(s): return len(s.x)

class CNN(nn.Layer):
    def __init__(s):
        super().__init__()
        s.conv = nn.Conv2D(1, 4, 3, padding=1)
        s.pool = nn.MaxPool2D(2)
        s.fc = nn.Linear(4 * 4 * 4, 2)
    def forward(s, x):
        return s.fc(paddle.flatten(s.pool(F.relu(s.conv(x))), 1))

net = CNN()
init = np.random.default_rng(1)
net.set_state_dict({k: paddle.to_tensor((init.standard_normal(v.shape) * 0.3).astype('float32'))
                    for k, v in net.state_dict().items()})
train, val = D(48), D(16)
sched = paddle.optimizer.lr.CosineAnnealingDecay(0.05, T_max=6)
model = paddle.Model(net, [InputSpec([None, 1, 8, 8], 'float32', 'x')], [InputSpec([None, 1], 'int64', 'y')])
model.prepare(paddle.optimizer.Momentum(sched, momentum=0.9, parameters=model.parameters()),
              nn.CrossEntropyLoss(), paddle.metric.Accuracy(topk=(1, 2)))
model.fit(train, val, epochs=3, batch_size=[8, 5], eval_freq=2, verbose=2, log_freq=3)
model.fit(train, epochs=2, batch_size=16, verbose=2, accumulate_grad_batches=2, num_iters=4)
print("eval", model.evaluate(val, batch_size=8, verbose=0))
print("pred", np.round(model.predict(val, batch_size=8, stack_outputs=True, verbose=0)[0][:3], 5).tolist())
preds = model.predict(val, batch_size=6, verbose=2)
print("predicted", len(preds), len(preds[0]), preds[0][-1].shape)
print("lr", sched())
