"""Numeric oracle: the emitted MLIR, lowered and run by upstream MLIR, equals numpy."""
import numpy as np
import pytest
from conftest import VARIANTS

from tpmlir import reference
from tpmlir.execute import run_forward


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_mlir_matches_numpy(mlir_runner, name):
    cfg = VARIANTS[name]
    w = reference.random_weights(cfg, seed=7)
    x = reference.random_input(cfg, seed=8)
    got = run_forward(cfg, w, x)
    want = reference.forward(cfg, w, x)
    assert not np.allclose(want, x, atol=1e-2)  # the blocks did something
    # printMemrefF32 prints 6 significant digits, hence the tolerance.
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
