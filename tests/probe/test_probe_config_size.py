"""A probe run the server would refuse (issue 26: protocol.oversize) fails at start with the
product that is too big, instead of at its first hello after torchrun has launched."""

import pytest

from gpu_probe.config import ConfigError, parse_args


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--dp", "65536", "--pp", "2", "--layers", "2"], "dp*tp*pp ranks = 131072"),
        (["--pp", "8", "--microbatches", "200000"], "pp*microbatches*chunks*3 actions"),
        (["--dp", "4096", "--microbatches", "16"], "F/B/W events per step"),
    ],
)
def test_a_run_too_big_to_serve_is_refused_at_start(argv, named):
    with pytest.raises(ConfigError) as err:
        parse_args(argv)
    assert named in str(err.value) and "over" in str(err.value)


def test_the_default_run_passes():
    cfg = parse_args([])
    assert cfg.dp * cfg.tp * cfg.pp >= 1
