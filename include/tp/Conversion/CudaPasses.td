//===- CudaPasses.td - the cuda lowering's own passes ------*- tablegen -*-===//
//
// Built only with the cuda lowering (MLIRTPCudaLowering); the pipeline that
// runs them is tp/Conversion/CudaPipeline.h's.
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_CUDAPASSES_TD
#define TP_CONVERSION_CUDAPASSES_TD

include "mlir/Pass/PassBase.td"

def TPSplitReductions : Pass<"tp-split-reductions", "func::FuncOp"> {
  let summary = "Split long reductions into stages of interleaved partial "
                "reductions of 32 elements (coalesced on the GPU)";
  let description = [{
    A `linalg.generic` with one reduction dimension of at least `min-size`
    elements, or of a dynamic size, becomes ceil(N / 32) partial reductions
    of 32 elements per output point, interleaved (lane j reads j, j + L,
    ...: a warp reads contiguous memory); their results are merged 32 at a
    time while more than 32 are left (and their number is static), then
    into the original init. A size that 32 does not divide, dynamic
    included (decode attention's softmax over `pos + 1` positions), is
    padded to a multiple of 32, and the partial reductions skip the padding;
    `linalg.index` of the reduced dimension becomes the element's position.
    The body must fold into the accumulator with one combiner that has a
    neutral element, or be an argmax/argmin (a value by maximumf or
    minimumf, and an index growing with the position, taken where the
    element compares strictly better: its merges take the smaller index on
    a tie, so the first occurrence wins as in the loop). Maps that are not
    projected permutations are left alone.
  }];
  let options = [
    Option<"minSize", "min-size", "int64_t",
           /*default=*/"kSplitReductionsMin",
           "split reductions over at least this many elements "
           "(default: kSplitReductionsMin, tp/Conversion/CudaPipeline.h)">,
    Option<"skipRowKernels", "skip-row-kernels", "bool", /*default=*/"false",
           "leave the reductions that tp-row-kernels takes">,
  ];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "tensor::TensorDialect"];
}

def TPRowKernels : Pass<"tp-row-kernels", "func::FuncOp"> {
  let summary = "Run a reduction and the ops beside it on the same rows as "
                "one kernel, a block per row";
  let description = [{
    In each run of linalg ops on buffers with only static allocations,
    deallocations and ops without memory effects between them, a reduction
    whose last loop reduces (one init, one combiner that `gpu.all_reduce`
    knows) takes the pointwise ops just before and after it over the same
    rows and row length (RMSNorm's residual add and scaling, softmax's
    exponentials and division, another reduction), and those over the rows
    alone (the fill of its init), as long as every buffer one of them
    writes is touched by all at the same element offset, one that changes
    with every row index, and no other buffer they touch may alias it. The
    run becomes an `scf.parallel` over the rows marked `tpcuda.row_kernel`
    whose body is one loop per op over the block's threads (`max-threads`,
    or the row length rounded up to 32 if less), each thread striding
    along the row; a reduction's loop folds each thread's elements and
    combines the threads' by its `scf.reduce`, and a loop over one thread
    folds that into the init. Static loop sizes only. On the host (the
    emulation) it runs as loops; `tp-row-kernels-to-gpu` makes it a kernel.
  }];
  let options = [
    Option<"maxThreads", "max-threads", "int64_t", /*default=*/"1024",
           "threads per block (one row)">,
  ];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
}

def TPRowKernelsToGpu : Pass<"tp-row-kernels-to-gpu", "ModuleOp"> {
  let summary = "Turn tp-row-kernels' loops into gpu.launch, a block per "
                "row, with barriers and gpu.all_reduce";
  let description = [{
    Each `scf.parallel` marked `tpcuda.row_kernel` becomes a `gpu.launch` of one
    block per row and as many threads as its largest thread loop; each
    thread loop runs with the thread's index (under `if` when it has fewer
    iterations), a reducing one ends in a uniform `gpu.all_reduce`, and a
    `gpu.barrier` stands between any two thread loops or loads. Ops between
    the thread loops may read memory but not write it.
  }];
  let dependentDialects = ["arith::ArithDialect", "gpu::GPUDialect",
                           "scf::SCFDialect"];
}

def TPGemmBf16 : Pass<"tp-gemm-bf16", "ModuleOp"> {
  let summary = "Run the runtime's fp32 GEMMs on bf16 inputs (fp32 "
                "accumulation); store the weights only GEMMs read in bf16";
  let description = [{
    `tprt_[batch_]matmul_f32` calls become `tprt_[batch_]matmul_bf16`.
    An entry-function argument that only GEMMs read becomes a bf16 argument
    (listed per entry in the module attribute `tpcompile.bf16_args` for the
    manifest;
    the launcher converts it once); any other operand is rounded into a
    fresh bf16 buffer by a kernel, shared by the GEMMs that read it until
    something else may write it. A GEMM with neither operand stored in bf16
    whose output has under 64 rows or columns (bound by reading its
    operands, such as a decode step's attention) stays f32.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

def TPDeviceConstants : Pass<"tp-device-constants", "ModuleOp"> {
  let summary = "Read memref.global constants through device copies "
                "(tprt_device_constant_<type>)";
  let description = [{
    Each `memref.get_global` of a constant global becomes a call of
    `tprt_device_constant_<type>` on the global's flattened view, which
    returns a device copy (uploaded by the first call, kept until
    `tprt_finalize`), viewed with the global's shape again. The types are
    f32, f64, f16, bf16 and the signless i64, i32, i16, i8 and i1 (position
    ids, masks). Writable globals and other element types are refused at the
    op.
  }];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect"];
}

def TPMergeGpuModules : Pass<"tp-merge-gpu-modules", "ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module (one ptxas "
                "run, one image to load)";
  let description = [{
    Each kernel is renamed after the module it came from and moved into the
    first one; every `gpu.launch_func` follows. When a module holds more than
    its kernel (a `memref.global` it reads, say), the program is left as it
    is.
  }];
}

def TPCopyToLinalg : Pass<"tp-copy-to-linalg", "func::FuncOp"> {
  let summary = "Turn memref.copy into linalg.copy (kernels on the GPU path)";
  let description = [{
    Copies (results into out-parameters, `tensor.concat`'s inserts) then
    become parallel loops, hence kernels, like every other op, instead of
    host calls of `memrefCopy` on device pointers.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def TPScalarKernels : Pass<"tp-scalar-kernels", "func::FuncOp"> {
  let summary = "Put linalg ops without loops in a parallel loop of one "
                "iteration (a kernel of one thread)";
  let description = [{
    A linalg op on buffers with no loops (rank-0 operands only, such as
    torch-mlir's conversion of a scalar constant) would otherwise lower to
    loads and stores on the host, against device memory. In an
    `scf.parallel` of one iteration it becomes a kernel like every other op.
  }];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect"];
}

def TPClusterKernelLoops : Pass<"tp-cluster-kernel-loops", "func::FuncOp"> {
  let summary = "Move allocations and deallocations out of runs of parallel "
                "loops, so that adjacent loops can fuse";
  let description = [{
    Before `tp-fuse-kernel-loops`, which fuses only loops with no
    side-effecting op between them: in each run of host ops made of
    `scf.parallel` loops, static `memref.alloc`s, `memref.dealloc`s and ops
    without memory effects (views, index arithmetic), every such allocation
    moves to the start of the run and every deallocation to its end. A
    buffer then lives a few kernels longer, no longer than the run: runs end
    at calls (GEMMs, collectives), dynamic allocations and anything else
    that touches memory. Loops that wrote and read the same points through a
    buffer allocated between them (RoPE's halves, the transposes into the
    KV cache) become adjacent, hence one kernel.
  }];
}

def TPFuseKernelLoops : Pass<"tp-fuse-kernel-loops", "func::FuncOp"> {
  let summary = "Fuse adjacent parallel loops of the same bounds (one kernel)";
  let description = [{
    Two `scf.parallel` loops with the same bounds and nothing that touches
    memory between them become one when no point of one depends on another
    point of the other: every buffer both touch, one of them writing it, is
    touched through the same memref at the same indices (the second loop's
    induction variables standing for the first's), or through disjoint
    static subviews of one buffer; loads never conflict; a read and a write
    of different buffers only where they cannot alias; writes to distinct
    buffers are independent (the runtime passes distinct buffers). A later
    loop of the same bounds moves up to an earlier one, with the pure ops
    that define what it uses (views), when the loops between commute with
    it (by the same rules, at any points): RoPE's rotations of q and k, then
    its products. Upstream `scf-parallel-loop-fusion` fuses only adjacent
    loops and never compares the two loops' writes: a fill and a transposed
    write into one buffer would race.
  }];
}

def TPHostScalarReads : Pass<"tp-host-scalar-reads", "ModuleOp"> {
  let summary = "Read the scalars the host needs from device memory by copies";
  let description = [{
    After the parallel loops, before `tp-tile-for-gpu`'s check: a
    `memref.load` of a rank-0 memref outside every parallel loop (a
    generating model's position) reads device memory on the host. Where a
    parallel loop (a kernel to be) uses a value computed from such a load
    through pure ops (casts, index arithmetic, views such as the subview at
    the offset of a decode step's cache write), and nothing writes the
    memref (its other uses are loads, or arguments of calls whose callee
    only reads them), the chain is cloned into the loop: the kernel loads
    the scalar itself, and the host's copy goes when nothing else uses it.
    A load the host still needs (a loop bound, an allocation's size, the
    length `pos + 1` of a decode step's attention) becomes a call of
    `tprt_read_scalar(host, device, bytes)` (libtprt_cuda: a copy on the
    rank's stream, after the work issued before it) into a `memref.alloca`
    and a load of that. The manifest (`tp.manifest`, when the module has
    one) then says of each function whether it reads on the host, itself
    or in a function it calls (`"host_reads": true` or `false`): a launcher
    cannot capture such a call as a CUDA graph (`tp-run-cuda
    --cuda-graph`).
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "LLVM::LLVMDialect", "memref::MemRefDialect"];
}

def TPTileForGpu : Pass<"tp-tile-for-gpu", "func::FuncOp"> {
  let summary = "Tile outermost parallel loops into blocks x threads";
  let description = [{
    Each outermost `scf.parallel` is tiled into tiles (blocks) of up to
    `block-size` points (threads), the innermost dimensions first, and both
    levels are mapped to the GPU's x, y, z, innermost first (threadIdx.x
    runs along contiguous memory; upstream's gpu-map-parallel-loops maps
    dimension 0 to x). Dimensions of one iteration are skipped. Then fails
    at the first memory access outside a parallel loop: the host cannot
    touch device buffers.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect"];
}

#endif // TP_CONVERSION_CUDAPASSES_TD
