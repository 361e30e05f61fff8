import os
import subprocess
import sys

import numpy as np
import pytest

from tpmlir import reference
from tpmlir.build import main
from tpmlir.checkpoint import bf16_bits, load_safetensors, main as checkpoint_main, save_safetensors
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


def test_safetensors_in_bf16_and_f16(tmp_path):
    # Ties round to even; NaN stays NaN; the reader widens both to float32.
    bits = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0xFFC00000], np.uint32)
    np.testing.assert_array_equal(bf16_bits(bits.view(np.float32)),
                                  np.array([0x3F80, 0x3F82, 0x3F81, 0x7F80, 0xFFC0], np.uint16))
    a = np.array([[1.0, -2.5, 1 + 2.0**-12, 65504.0, 2.0**-24]], np.float32)
    path = str(tmp_path / "t.safetensors")
    for floats, exact in (("BF16", lambda x: (bf16_bits(x).astype(np.uint32) << 16).view(np.float32)),
                          ("F16", lambda x: x.astype(np.float16).astype(np.float32))):
        written = save_safetensors(path, {"a": a, "ids": np.arange(3)}, floats=floats)
        assert written == 2 * a.size + 8 * 3
        back = load_safetensors(path)
        assert back["a"].dtype == np.float32 and back["ids"].dtype == np.int64
        np.testing.assert_array_equal(back["a"], exact(a))
    assert not np.array_equal(back["a"], a)  # 1 + 2**-12 is not an F16
    with pytest.raises(ValueError, match="floats must be F32, BF16 or F16"):
        save_safetensors(path, {"a": a}, floats="F64")


def test_raw_parameters_become_one_flat_tensor(tmp_path, capsys):
    # buddy-mlir's arg0.data: a model's parameters, raw, one after the other.
    params = np.arange(10, dtype=np.float32) / 3
    params.tofile(tmp_path / "arg0.data")
    out = tmp_path / "params.safetensors"
    assert checkpoint_main(["--raw", str(tmp_path / "arg0.data"), "--name", "arg0", "-o", str(out)]) == 0
    assert "'arg0' [10] F32" in capsys.readouterr().out
    loaded = load_safetensors(str(out))
    assert list(loaded) == ["arg0"]
    np.testing.assert_array_equal(loaded["arg0"], params)


def test_raw_parameters_of_a_partial_element_are_refused(tmp_path, capsys):
    (tmp_path / "odd.data").write_bytes(b"\0" * 10)
    assert checkpoint_main(["--raw", str(tmp_path / "odd.data"), "--name", "arg0",
                            "-o", str(tmp_path / "x.safetensors")]) == 1
    assert "10 bytes are not a whole number of F32 elements" in capsys.readouterr().err
    assert checkpoint_main(["--raw", str(tmp_path / "missing.data"), "--name", "arg0",
                            "-o", str(tmp_path / "y.safetensors")]) == 1
    assert "missing.data" in capsys.readouterr().err
    assert checkpoint_main(["--raw", str(tmp_path / "odd.data"), "--name", "arg0", "--dtype", "BF16",
                            "-o", str(tmp_path / "odd.data")]) == 1
    assert "would overwrite the raw file" in capsys.readouterr().err
    assert (tmp_path / "odd.data").read_bytes() == b"\0" * 10


def test_raw_bf16_parameters_keep_their_bits(tmp_path):
    bits = bf16_bits(np.array([1.5, -2.0, 3.25], np.float32))
    bits.astype("<u2").tofile(tmp_path / "p.data")
    assert checkpoint_main(["--raw", str(tmp_path / "p.data"), "--name", "p", "--dtype", "BF16",
                            "-o", str(tmp_path / "p.safetensors")]) == 0
    np.testing.assert_array_equal(load_safetensors(str(tmp_path / "p.safetensors"))["p"],
                                  np.array([1.5, -2.0, 3.25], np.float32))
