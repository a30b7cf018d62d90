"""The training schedule against values by hand and against transformers' linear warm-up helper."""

from __future__ import annotations

import pytest
import torch
from transformers import get_linear_schedule_with_warmup

from toxlib.models.schedule import linear_warmup_decay, warmup_factor


def _factors(scheduler, optimizer, steps: int) -> list[float]:
    out = []
    for _ in range(steps):
        out.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return out


def test_factors_by_hand():
    # 10 steps, 2 of warm-up: 1/2, then 1, then (10 - s) / 8 down to 1/8
    assert [warmup_factor(s, 2, 10) for s in range(10)] == [0.5, 1.0, 1.0, 7 / 8, 6 / 8, 5 / 8, 4 / 8, 3 / 8, 2 / 8,
                                                               1 / 8]


@pytest.mark.parametrize("warm, steps", [(1, 5), (2, 24), (7, 100)])
def test_the_decay_is_transformers_and_the_warm_up_one_step_ahead_of_it(warm, steps):
    make = lambda: torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)  # noqa: E731
    ours_opt, theirs_opt = make(), make()
    ours = _factors(linear_warmup_decay(ours_opt, warm, steps), ours_opt, steps)
    theirs = _factors(get_linear_schedule_with_warmup(theirs_opt, warm, steps), theirs_opt, steps + 1)
    assert ours[warm:] == pytest.approx(theirs[warm:steps])  # the same decay
    assert ours[:warm] == pytest.approx(theirs[1:warm + 1])  # warm-up: ours starts where theirs is one step later
    assert theirs[0] == 0.0 and ours[0] == pytest.approx(1 / warm)


def test_a_schedule_without_steps_is_refused():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="at least 1"):
        linear_warmup_decay(opt, 0, 10)
