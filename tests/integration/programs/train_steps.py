"""A small real PyTorch training loop for torch_steps_test.cc.

    python3 train_steps.py EPOCHS SAMPLES BATCH WORKERS START_METHOD [custom]

Trains a linear model for EPOCHS epochs over SAMPLES random samples in
batches of BATCH, with WORKERS DataLoader workers started by START_METHOD
(fork, spawn, forkserver; "default" for torch's choice), and prints how many
optimizer steps it took. With "custom", the optimizer is a subclass whose
step() calls super().step(), after a plain SGD has been built too, so that
both classes' step methods are wrapped and one call goes through both.
It knows nothing of iotap.
"""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


class Custom(torch.optim.SGD):
    def step(self, closure=None):
        return super().step(closure)


def main(epochs, samples, batch, workers, method, custom=False):
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(samples, 8), torch.randn(samples, 1))
    options = {"num_workers": workers}
    if workers > 0 and method != "default":
        options["multiprocessing_context"] = method
    loader = DataLoader(dataset, batch_size=batch, **options)
    model = torch.nn.Linear(8, 1)
    if custom:
        torch.optim.SGD(model.parameters(), lr=0.01)
    optimizer = (Custom if custom else torch.optim.SGD)(model.parameters(), lr=0.01)
    steps = 0
    for _ in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
    print("optimizer steps", steps)


if __name__ == "__main__":
    a = sys.argv[1:]
    main(int(a[0]), int(a[1]), int(a[2]), int(a[3]), a[4], len(a) > 5 and a[5] == "custom")
