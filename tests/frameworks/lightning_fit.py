#!/usr/bin/env python3
"""A Lightning Trainer.fit as users write it (the framework suite, tests/frameworks/): a
LightningModule MLP that logs its loss with self.log(..., prog_bar=True), a DataLoader over host
tensors, Trainer.fit() from one line, the progress bar on, nothing written to disk.

    lightning_fit.py [--fix prog-bar-off,pinned,log-every,metric-no-validate] [--steps N]
                     [--warmup W] [--size small|gpu] [--package lightning|pytorch_lightning]

  prog-bar-off  self.log(..., prog_bar=False): the progress bar no longer reads the loss on
                the host at each refresh
  pinned        DataLoader(pin_memory=True): Lightning's batch copies (non_blocking already)
                no longer wait on pageable memory
  log-every     self.log(..., on_step=False, on_epoch=True): the loss reduced on the GPU and read
                once an epoch
  metric-no-validate
                torchmetrics' MulticlassAccuracy(..., validate_args=False): the metric, updated
                each step, no longer checks its inputs' values on the host

Prints fw_common's JSON line. --package: the `lightning` package (default) or the older
`pytorch_lightning` (with `lightning_fabric`)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_common  # noqa: E402

FIXES = ("prog-bar-off", "pinned", "log-every", "metric-no-validate")
SIZES = {"small": dict(width=512, depth=4, batch=64), "gpu": dict(width=4096, depth=8, batch=512)}


def lightning_module(name):
    return fw_common.need(name)


def main():
    ap = fw_common.parser(__doc__, FIXES)
    ap.add_argument("--package", choices=("lightning", "pytorch_lightning"), default="lightning")
    a = ap.parse_args()
    fixes = fw_common.fixes_of(ap, a, FIXES)
    torch = fw_common.need("torch")
    L = lightning_module(a.package)
    fw_common.need("torchmetrics")
    from torchmetrics.classification import MulticlassAccuracy
    fw_common.cuda_or_exit(torch)
    s = SIZES[a.size]
    timer = fw_common.StepTimer(torch, a.warmup, a.steps)
    on_step = "log-every" not in fixes
    prog_bar = "prog-bar-off" not in fixes

    class MLP(L.LightningModule):
        def __init__(self):
            super().__init__()
            layers = []
            for _ in range(s["depth"]):
                layers += [torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU()]
            self.net = torch.nn.Sequential(*layers, torch.nn.Linear(s["width"], 10))
            self.acc = MulticlassAccuracy(num_classes=10,
                                          validate_args="metric-no-validate" not in fixes)

        def training_step(self, batch, i):
            x, y = batch
            logits = self.net(x)
            loss = torch.nn.functional.cross_entropy(logits, y)
            self.acc.update(logits.argmax(1), y)  # labels: the values are checked
            self.log("train_loss", loss, prog_bar=prog_bar, on_step=on_step, on_epoch=not on_step)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    class Timing(L.Callback):
        def on_train_batch_end(self, trainer, module, outputs, batch, i):
            timer.step_done(trainer.global_step)

    torch.manual_seed(0)
    xs = torch.randn(s["batch"] * 16, s["width"])
    ys = torch.randint(0, 10, (s["batch"] * 16,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys),
                                         batch_size=s["batch"], pin_memory="pinned" in fixes)
    trainer = L.Trainer(max_steps=a.steps, accelerator="gpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_model_summary=False,
                        enable_progress_bar=True, log_every_n_steps=1, callbacks=[Timing()])
    trainer.fit(MLP(), loader)  # the user's one line
    return fw_common.emit("lightning_fit", fixes, a, timer)


if __name__ == "__main__":
    sys.exit(main())
