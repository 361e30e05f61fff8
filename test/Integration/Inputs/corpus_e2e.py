"""Random arguments for a compiled corpus graph, and an independent reference.

    corpus_e2e.py arguments MODEL.so PREFIX [--ids-below N] [--arange NAME]
                            [--weight-scale S] [--portable]
        Reads MODEL.so's manifest (or MODEL.json, that manifest saved) and
        writes random values for its arguments
        (f32: normal, standard deviation S, default 0.1; with --portable
        uniform of that deviation, from an integer hash: the same values
        from any numpy, so that the GPU machine makes the arguments whose
        cpu backend output gpu_bundle.sh computed here):
        PREFIX.safetensors (the weights: named f32 arguments, NAME given with
        --arange, and the unnamed arguments of role weight, in order, as
        argI), PREFIX.NAME.npy for each input and their names in
        PREFIX.inputs. Integer inputs are drawn
        from [0, N); --arange fills a named integer argument with
        0, 1, 2, ... along its last dimension (a position ids buffer).

    corpus_e2e.py manifest MODEL.so
        Prints MODEL.so's manifest (JSON), for `arguments` on a machine that
        cannot load MODEL.so.

    corpus_e2e.py reference REF.mlir PRODUCER.mlir PREFIX OUT.npy
        Runs REF.mlir's function (the hand-prepared .tp.mlir of the corpus:
        upstream TOSA conversions, weights made arguments by a script) through
        upstream MLIR only (bufferize, loops, LLVM; mlir-translate; clang) on
        the values the first command wrote, bound by name, and saves its
        result. tp-import names a weight it took from a constant `const_L<n>`:
        the SSA name at line n of PRODUCER.mlir is the .tp.mlir's name. A
        .tp.mlir argument with no value there is a splat constant the import
        left in place (a bias): its value is read from PRODUCER.mlir. A
        function of several results writes them as tp-run does: OUT.npy,
        OUT.1.npy, ...

The LLVM tools are those of $TPMLIR_LLVM_PREFIX (default /usr/lib/llvm-22).
"""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from tpmlir.checkpoint import load_safetensors, save_safetensors
# The transform script that expands linalg.softmax, as the CPU oracle uses it.
from tpmlir.execute import SOFTMAX_DECOMPOSE, find_tool

DTYPES = {"f32": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}

# C wrappers for the model's function only, not for the libm functions
# convert-math-to-libm declares after it.
LOWERING = [
    "--llvm-request-c-wrappers", "--convert-elementwise-to-linalg",
    "--one-shot-bufferize=bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map",
    "--convert-linalg-to-loops", "--convert-scf-to-cf",
    "--expand-strided-metadata", "--lower-affine",
    "--finalize-memref-to-llvm", "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-arith-to-llvm", "--convert-func-to-llvm",
    "--convert-cf-to-llvm", "--reconcile-unrealized-casts",
]


def manifest(path):
    if path.endswith(".json"):  # what tp_model_manifest returned, saved
        with open(path) as f:
            return json.load(f)
    lib = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_LAZY)
    lib.tp_model_manifest.restype = ctypes.c_char_p
    return json.loads(lib.tp_model_manifest())


def hashed(shape, stream):
    """splitmix64 of (stream, element index): uint64 arithmetic, which wraps
    the same in every numpy."""
    z = np.arange(int(np.prod(shape)), dtype=np.uint64) + np.uint64(stream << 40)
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return (z ^ (z >> np.uint64(31))).reshape(shape)


def arguments(args):
    m = manifest(args.model)
    rng = np.random.default_rng(0)
    weights, inputs = {}, []
    for k, a in enumerate(m["functions"][0]["args"]):
        shape, dtype = tuple(a["shape"]), DTYPES[a["dtype"]]
        if a["name"] in args.arange:
            value = np.broadcast_to(np.arange(shape[-1]), shape).astype(dtype)
        elif dtype == np.float32 and args.portable:
            u = (hashed(shape, k) >> np.uint64(40)).astype(np.float64) / 2**24
            value = ((u - 0.5) * (12 ** 0.5 * args.weight_scale)).astype(dtype)
        elif dtype == np.float32:
            value = (args.weight_scale *
                     rng.standard_normal(shape)).astype(dtype)
        elif dtype == np.bool_:
            value = np.ones(shape, dtype)
        elif args.portable:
            value = (hashed(shape, k) % np.uint64(args.ids_below)).astype(dtype)
        else:
            value = rng.integers(0, args.ids_below, shape).astype(dtype)
        weight = a.get("role") == "weight" or (
            a["named"] and (dtype == np.float32 or a["name"] in args.arange))
        if weight:
            weights[a["name"]] = value
        else:
            np.save(f"{args.prefix}.{a['name']}.npy", value)
            inputs.append(a["name"])
    save_safetensors(f"{args.prefix}.safetensors", weights)
    with open(f"{args.prefix}.inputs", "w") as f:
        f.write("".join(name + "\n" for name in inputs))


class Descriptor:
    """A ranked memref descriptor for a numpy array (kept alive with it)."""

    def __init__(self, rank):
        self.rank = rank
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        self.type = type(f"MemRef{rank}", (ctypes.Structure,),
                         {"_fields_": fields})

    def of(self, array):
        d = self.type()
        d.allocated = d.aligned = array.ctypes.data
        d.offset = 0
        for i, n in enumerate(array.shape):
            d.sizes[i] = n
            d.strides[i] = array.strides[i] // array.itemsize
        return d


def signature(text):
    """The public function with a body: its name, (name, shape, dtype) per
    argument (argI for one without a tp.name) and the shape of each
    result."""
    m = re.search(r"func\.func (?:public )?@([\w$.-]+)\((.*?)\)\s*->\s*"
                  r"(.*?)\s*(?:attributes\s*\{[^{}]*\}\s*)?\{\s*$", text,
                  re.S | re.M)
    aliases = dict(re.findall(r"^(![\w.]+)\s*=\s*(tensor<[^>]*>)", text, re.M))
    params = []
    for i, p in enumerate(re.finditer(
            r"%[\w$.-]+\s*:\s*(tensor<[^>]*>|![\w.]+)(\s*\{[^}]*\})?",
            m.group(2))):
        ty = aliases.get(p.group(1), p.group(1))
        dims, et = re.match(r"tensor<([0-9x]*?)x?(f32|i64|i32|i1)>",
                            ty).groups()
        name = re.search(r'tp\.name = "([^"]+)"', p.group(2) or "")
        params.append((name.group(1) if name else f"arg{i}",
                       tuple(int(d) for d in dims.split("x") if d), et))
    # The result types, their attribute dictionaries left out.
    results = []
    for ty in re.findall(r"tensor<[^>]*>|![\w.]+",
                         re.sub(r"\{[^{}]*\}", "", m.group(3))):
        dims = re.match(r"tensor<([0-9x]*?)x?f32>", aliases.get(ty, ty))
        results.append(tuple(int(d) for d in dims.group(1).split("x") if d))
    return m.group(1), params, results


def splat_constant(producer, name, shape, dtype):
    m = re.search(r"%" + re.escape(name) +
                  r" = arith\.constant dense<([^>\[\]]+)> : tensor<", producer)
    if not m:
        sys.exit(f"reference: no value for argument '{name}'")
    return np.full(shape, float(m.group(1)), DTYPES[dtype])


def lower(text, work):
    src = os.path.join(work, "ref.mlir")
    with open(src, "w") as f:
        f.write(text)
    mlir_opt = find_tool("mlir-opt")
    if "linalg.softmax" in text:
        spec = os.path.join(work, "softmax.mlir")
        with open(spec, "w") as f:
            f.write(SOFTMAX_DECOMPOSE)
        subprocess.run([mlir_opt, src, "--pass-pipeline=builtin.module("
                        f"transform-preload-library{{transform-library-paths={spec}}},"
                        "transform-interpreter)", "-o", src + ".1"], check=True)
        src += ".1"
    llvm_dialect = os.path.join(work, "ref.llvm.mlir")
    subprocess.run([mlir_opt, src, *LOWERING, "-o", llvm_dialect], check=True)
    ll = os.path.join(work, "ref.ll")
    subprocess.run([find_tool("mlir-translate"),
                    "--mlir-to-llvmir", llvm_dialect, "-o", ll], check=True)
    so = os.path.join(work, "ref.so")
    # A memref.copy between strided views becomes a call of memrefCopy,
    # which upstream's runner utilities define.
    lib = os.path.join(os.path.dirname(os.path.dirname(
        os.path.realpath(mlir_opt))), "lib")
    subprocess.run([find_tool("clang"), "-O2", "-shared",
                    "-fPIC", "-Wno-override-module", ll, "-o", so, "-lm",
                    f"-L{lib}", "-lmlir_c_runner_utils", f"-Wl,-rpath,{lib}"],
                   check=True)
    return so


def reference(args):
    text = open(args.ref).read()
    producer = open(args.producer).read()
    lines = producer.split("\n")
    values = load_safetensors(f"{args.prefix}.safetensors")
    for name in open(f"{args.prefix}.inputs").read().split():
        values[name] = np.load(f"{args.prefix}.{name}.npy")
    for name in list(values):
        line = re.fullmatch(r"const_L(\d+)", name)
        if line:
            ssa = re.match(r"\s*%([\w$.-]+) =", lines[int(line.group(1)) - 1])
            values.setdefault(ssa.group(1), values[name])
    fn, params, result_shapes = signature(text)
    arrays = []
    for name, shape, dtype in params:
        value = values.get(name)
        if value is None:
            value = splat_constant(producer, name, shape, dtype)
        if tuple(value.shape) != shape:
            sys.exit(f"reference: '{name}' is {value.shape}, {args.ref} takes {shape}")
        arrays.append(np.ascontiguousarray(value, DTYPES[dtype]))
    with tempfile.TemporaryDirectory() as work:
        lib = ctypes.CDLL(lower(text, work))
        # The C wrapper returns the results as one struct of descriptors.
        outs = type("Results", (ctypes.Structure,), {"_fields_": [
            (f"r{i}", Descriptor(len(shape)).type)
            for i, shape in enumerate(result_shapes)]})()
        descs = [Descriptor(a.ndim).of(a) for a in arrays]
        getattr(lib, f"_mlir_ciface_{fn}")(
            ctypes.byref(outs), *[ctypes.byref(d) for d in descs])
        for i, shape in enumerate(result_shapes):
            out = getattr(outs, f"r{i}")
            n = int(np.prod(shape))
            buf = (ctypes.c_float * n).from_address(out.aligned + 4 * out.offset)
            y = np.frombuffer(buf, np.float32).reshape(shape).copy()
            np.save(result_path(args.out, i), y)


def result_path(out, i):
    """tp-run's name of result i: OUT.npy, then OUT.1.npy, OUT.2.npy..."""
    if i == 0:
        return out
    stem, npy = (out[:-4], ".npy") if out.endswith(".npy") else (out, "")
    return f"{stem}.{i}{npy}"


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("arguments")
    a.add_argument("model")
    a.add_argument("prefix")
    a.add_argument("--ids-below", type=int, default=100)
    a.add_argument("--arange", action="append", default=[])
    a.add_argument("--weight-scale", type=float, default=0.1)
    a.add_argument("--portable", action="store_true")
    m = sub.add_parser("manifest")
    m.add_argument("model")
    r = sub.add_parser("reference")
    r.add_argument("ref")
    r.add_argument("producer")
    r.add_argument("prefix")
    r.add_argument("out")
    args = ap.parse_args()
    {"arguments": arguments, "reference": reference,
     "manifest": lambda args: json.dump(manifest(args.model), sys.stdout)
     }[args.command](args)


if __name__ == "__main__":
    main()
