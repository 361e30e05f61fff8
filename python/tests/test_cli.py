import os
import subprocess
import sys

import numpy as np

from tpmlir import reference
from tpmlir.build import main
from tpmlir.checkpoint import load_safetensors, save_safetensors
from tpmlir.config import tiny_llama
from tpmlir.params import param_specs

PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..")


def test_module_entry_point_prints_mlir():
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    out = subprocess.run([sys.executable, "-m", "tpmlir.build", "--preset", "gpt2_small", "--layers", "1",
                          "--seq", "8", "--qkv", "separate", "--norm", "rmsnorm", "--no-bias"],
                         capture_output=True, text=True, env=env, check=True).stdout
    assert out.startswith("// tpmlir ModelConfig(layers=1, d_model=768")
    assert '{tp.name = "h.0.attn.q.weight"}' in out and "bias" not in out.split("module", 1)[1]


def test_writes_file_and_checkpoint(tmp_path):
    paths = {k: str(tmp_path / f"{k}.out") for k in ("mlir", "w", "x", "y")}
    assert main(["--preset", "tiny_llama", "--layers", "1", "-o", paths["mlir"], "--weights", paths["w"],
                 "--input", paths["x"], "--expected", paths["y"]]) == 0
    assert "func.func @forward" in open(paths["mlir"]).read()
    cfg = tiny_llama(layers=1)
    w = load_safetensors(paths["w"])
    assert {k: v.shape for k, v in w.items()} == dict(param_specs(cfg))
    y = reference.forward(cfg, w, load_safetensors(paths["x"])["x"])
    np.testing.assert_array_equal(y, load_safetensors(paths["y"])["y"])


def test_invalid_config_is_an_error(capsys):
    assert main(["--preset", "tiny_gpt2", "--heads", "5"]) == 2
    assert "not divisible by heads=5" in capsys.readouterr().err


def test_inline_weights_are_not_written_twice(tmp_path, capsys):
    assert main(["--preset", "tiny_gpt2", "--inline-weights", "--weights", str(tmp_path / "w")]) == 2
    assert "--inline-weights puts the weights in the MLIR" in capsys.readouterr().err


def test_safetensors_round_trip(tmp_path):
    t = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(5, dtype=np.float32)}
    path = str(tmp_path / "t.safetensors")
    save_safetensors(path, t, {"k": "v"})
    back = load_safetensors(path)
    assert back.keys() == t.keys()
    for k in t:
        np.testing.assert_array_equal(back[k], t[k])
    with open(path, "rb") as f:
        assert int.from_bytes(f.read(8), "little") % 8 == 0
