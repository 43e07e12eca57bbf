"""What the PyTorch training programs of tests/audit/ share: the MLP they train and one step of
it (zero the gradients, forward, loss, backward on the autograd engine's thread, optimizer)."""


def mlp(torch, width, out, device):
    """Linear-ReLU-Linear-ReLU-Linear, width wide, out outputs, on device."""
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, out)).to(device)


def stepper(model, opt, loss_fn, x, y):
    """step() -> the step's loss, a tensor on the GPU (nothing read back)."""
    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step
