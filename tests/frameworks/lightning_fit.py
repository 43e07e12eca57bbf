#!/usr/bin/env python3
"""A Lightning Trainer.fit as users write it (the framework suite, tests/frameworks/): a
LightningModule MLP that logs its loss with self.log(..., prog_bar=True), a DataLoader over host
tensors, Trainer.fit() from one line, the progress bar on, nothing written to disk.

    lightning_fit.py [--fix prog-bar-off,pinned,log-every,metric-no-validate] [--steps N]
                     [--warmup W] [--size small|gpu] [--package lightning|pytorch_lightning]
                     [--alternate prog-bar-off --blocks B [--first sync|fixed]]

  prog-bar-off  self.log(..., prog_bar=False): the progress bar no longer reads the loss on
                the host at each refresh
  pinned        DataLoader(pin_memory=True): Lightning's batch copies (non_blocking already)
                no longer wait on pageable memory
  log-every     self.log(..., on_step=False, on_epoch=True): the loss reduced on the GPU and read
                once an epoch
  metric-no-validate
                torchmetrics' MulticlassAccuracy(..., validate_args=False): the metric, updated
                each step, no longer checks its inputs' values on the host

--alternate prog-bar-off switches the logged loss's prog_bar between blocks (fw_common), from a
Callback's on_train_batch_end: training_step passes self.log(..., prog_bar=self.prog_bar), and
as Lightning refuses a key logged again with other arguments, the switch also sets prog_bar in
the metadata it keeps for the key (trainer._results) and, turning it off, drops the value the
bar still holds (what a run with prog_bar=False never had). A block is a multiple of 16 steps
(an epoch of the loader), so that each holds as many epoch ends. The other options do not
switch in place: the loader, the metric and on_step/on_epoch are set up front.

Prints fw_common's JSON line. --package: the `lightning` package (default) or the older
`pytorch_lightning` (with `lightning_fabric`)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_common  # noqa: E402

FIXES = ("prog-bar-off", "pinned", "log-every", "metric-no-validate")
TOGGLES = ("prog-bar-off",)  # the fixes --alternate switches in place
EPOCH = 16  # batches an epoch
LOSS = "train_loss"
SIZES = {"small": dict(width=512, depth=4, batch=64), "gpu": dict(width=4096, depth=8, batch=512)}


def lightning_module(name):
    return fw_common.need(name)


class ProgBarSwitch:
    """prog-bar-off in place (fw_common's set_fix): the module's flag that its self.log passes,
    and the same flag in the metadata Lightning keeps for the logged key; off, the value the bar
    holds dropped. trainer and module: the Timing callback's, set before each call."""

    trainer = module = None

    def __call__(self, on):
        self.module.prog_bar = not on
        kept = [m for m in (self.trainer._results or {}).values()
                if getattr(getattr(m, "meta", None), "name", None) == LOSS]
        if not kept:
            raise RuntimeError(f"prog-bar-off: no {LOSS!r} in Lightning's logged results")
        for m in kept:
            m.meta.prog_bar = not on
        if on:
            shown = self.trainer._logger_connector._progress_bar_metrics
            for key in [k for k in shown if k == LOSS or k.startswith(LOSS + "_")]:
                del shown[key]


def main():
    ap = fw_common.parser(__doc__, FIXES, TOGGLES)
    ap.add_argument("--package", choices=("lightning", "pytorch_lightning"), default="lightning")
    a = ap.parse_args()
    fixes = fw_common.fixes_of(ap, a, FIXES, period=EPOCH)
    torch = fw_common.need("torch")
    L = lightning_module(a.package)
    fw_common.need("torchmetrics")
    from torchmetrics.classification import MulticlassAccuracy
    fw_common.cuda_or_exit(torch)
    s = SIZES[a.size]
    on_step = "log-every" not in fixes

    class MLP(L.LightningModule):
        def __init__(self):
            super().__init__()
            layers = []
            for _ in range(s["depth"]):
                layers += [torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU()]
            self.net = torch.nn.Sequential(*layers, torch.nn.Linear(s["width"], 10))
            self.acc = MulticlassAccuracy(num_classes=10,
                                          validate_args="metric-no-validate" not in fixes)
            self.prog_bar = "prog-bar-off" not in fixes

        def training_step(self, batch, i):
            x, y = batch
            logits = self.net(x)
            loss = torch.nn.functional.cross_entropy(logits, y)
            self.acc.update(logits.argmax(1), y)  # labels: the values are checked
            self.log(LOSS, loss, prog_bar=self.prog_bar, on_step=on_step, on_epoch=not on_step)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    class Timing(L.Callback):
        def on_train_batch_end(self, trainer, module, outputs, batch, i):
            switch.trainer, switch.module = trainer, module
            timer.step_done(trainer.global_step)

    switch = ProgBarSwitch()
    timer = fw_common.timer_of(torch, a, switch)
    torch.manual_seed(0)
    xs = torch.randn(s["batch"] * EPOCH, s["width"])
    ys = torch.randint(0, 10, (s["batch"] * EPOCH,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys),
                                         batch_size=s["batch"], pin_memory="pinned" in fixes)
    trainer = L.Trainer(max_steps=fw_common.total_steps(a), accelerator="gpu", devices=1,
                        logger=False, enable_checkpointing=False, enable_model_summary=False,
                        enable_progress_bar=True, log_every_n_steps=1, callbacks=[Timing()])
    trainer.fit(MLP(), loader)  # the user's one line
    return fw_common.emit("lightning_fit", fixes, a, timer)


if __name__ == "__main__":
    sys.exit(main())
