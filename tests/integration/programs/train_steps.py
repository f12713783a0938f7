"""A small real PyTorch training loop for torch_steps_test.cc.

    python3 train_steps.py EPOCHS SAMPLES BATCH WORKERS START_METHOD [custom|eval]

Trains a linear model for EPOCHS epochs over SAMPLES random samples in
batches of BATCH, with WORKERS DataLoader workers started by START_METHOD
(fork, spawn, forkserver; "default" for torch's choice), and prints how many
optimizer steps it took. With "custom", the optimizer is a subclass whose
step() calls super().step(), after a plain SGD has been built too, so that
both classes' step methods are wrapped and one call goes through both.
With "eval", the loop only evaluates the model (no optimizer step) and
prints how many batches it saw.
It knows nothing of iotap.
"""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


class Custom(torch.optim.SGD):
    def step(self, closure=None):
        return super().step(closure)


def evaluate(model, loader, epochs):
    batches = 0
    with torch.no_grad():
        for _ in range(epochs):
            for x, y in loader:
                torch.nn.functional.mse_loss(model(x), y)
                batches += 1
    print("batches", batches)


def main(epochs, samples, batch, workers, method, custom=False, eval_only=False):
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(samples, 8), torch.randn(samples, 1))
    options = {"num_workers": workers}
    if workers > 0 and method != "default":
        options["multiprocessing_context"] = method
    loader = DataLoader(dataset, batch_size=batch, **options)
    model = torch.nn.Linear(8, 1)
    if eval_only:
        evaluate(model, loader, epochs)
        return
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
    mode = a[5] if len(a) > 5 else ""
    main(int(a[0]), int(a[1]), int(a[2]), int(a[3]), a[4], mode == "custom", mode == "eval")
