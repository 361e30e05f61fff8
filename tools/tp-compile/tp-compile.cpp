//===- tp-compile.cpp - MLIR model -> per-rank shared object --------------===//
//
//   tp-compile model.mlir --tp-size N --backend cpu -o model.so
//
// In one process: tp-import, tp-shard, the manifest (tp-model-manifest), the
// CPU or cuda lowering, the model interface (tp-model-interface), then LLVM IR,
// -O2 (-O; code generation at level 1, --codegen-opt), an object file and an
// lld link (tp/Target/ModelObject.h) into the shared object of
// runtime/include/tprt/model.h.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/CudaPipeline.h"
#include "tp/Conversion/Passes.h"
#include "tp/Import/Passes.h"
#include "tp/InitAll.h"
#include "tp/Target/ModelObject.h"
#include "tp/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("tp-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required, cl::cat(category));
enum class From { Model, Lowered };
static cl::opt<From>
    from("from", cl::desc("what the input is"), cl::init(From::Model),
         cl::values(clEnumValN(From::Model, "model",
                               "the unsharded model (default)"),
                    clEnumValN(From::Lowered, "lowered",
                               "LLVM-dialect MLIR with the model interface, as "
                               "--emit=lowered writes it or another pipeline "
                               "ending in tp-model-interface: only translated, "
                               "optimised and linked")),
         cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("output file"),
                                       cl::value_desc("model.so"),
                                       cl::init("model.so"), cl::cat(category));
static cl::opt<int64_t> tpSize("tp-size", cl::desc("number of ranks"),
                               cl::init(1), cl::cat(category));
static cl::opt<std::string> backend("backend", cl::desc("cpu or cuda"),
                                    cl::init("cpu"), cl::cat(category));
static cl::opt<std::string> weightsOut(
    "weights-out",
    cl::desc("move the weights given as constants (torch-mlir's "
             "dense_resource, splats of stripped models) into arguments, so "
             "that they are cut, and write their values to this safetensors "
             "file for tp-run --weights; without it they are compiled into "
             "the model, and only elided ones become arguments"),
    cl::value_desc("weights.safetensors"), cl::init(""), cl::cat(category));
static cl::opt<bool>
    allowFallback("allow-fallback",
                  cl::desc("accept cuts that need extra communication"),
                  cl::init(false), cl::cat(category));
enum class Emit { Sharded, Lowered, LLVMIR, Object, Shared };
static cl::opt<Emit> emit(
    "emit", cl::desc("what to write"), cl::init(Emit::Shared),
    cl::values(clEnumValN(Emit::Sharded, "sharded", "the per-rank MLIR"),
               clEnumValN(Emit::Lowered, "lowered", "the LLVM-dialect MLIR"),
               clEnumValN(Emit::LLVMIR, "llvm", "LLVM IR"),
               clEnumValN(Emit::Object, "obj", "an object file"),
               clEnumValN(Emit::Shared, "so", "a shared object (default)")),
    cl::cat(category));
static cl::opt<std::string>
    runtimeDir("runtime-dir",
               cl::desc("where libtprt.so is (linked as DT_NEEDED)"),
               cl::init(TP_RUNTIME_LIB_DIR), cl::cat(category));
static cl::opt<unsigned>
    optLevel("O", cl::desc("LLVM optimisation level of the model, 0 to 3"),
             cl::Prefix, cl::init(2), cl::cat(category));
static cl::opt<int> codegenOptLevel(
    "codegen-opt",
    cl::desc("LLVM code generation level of the model (instruction "
             "selection, scheduling, register allocation), 0 to 3; -1 "
             "(default): -O's, at most 1"),
    cl::init(-1), cl::cat(category));
static cl::opt<bool> printOpOnDiagnostic(
    "print-op-on-diagnostic",
    cl::desc("print the op a diagnostic is about (off: a model's function "
             "would be printed whole)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> gemmDtype(
    "dtype",
    cl::desc("GEMM input type: f32, or bf16 (cuda: operands rounded to bf16, "
             "fp32 accumulation and activations)"),
    cl::init("f32"), cl::cat(category));
static cl::opt<bool> foldBroadcastIntoMatmul(
    "fold-broadcast-into-matmul",
    cl::desc("run a batched GEMM by a weight broadcast over the batch "
             "(torch-mlir's linear layers) as one GEMM on the weight; false "
             "keeps the broadcast copy, to measure what it costs"),
    cl::init(true), cl::cat(category));

static cl::opt<bool> outlineRepeatedBlocks(
    "outline-blocks",
    cl::desc("compile each repeated block (a transformer layer) once, as a "
             "function every layer calls; false keeps the forward pass one "
             "straight-line function, to compare against"),
    cl::init(true), cl::cat(category));

static cl::opt<bool> stackWeights(
    "stack-weights",
    cl::desc("run the GEMMs that read one activation by weights stored "
             "apart (q, k, v; gate, up) as one GEMM over their weights, "
             "which the loader stacks (default: on for cuda, where wider "
             "GEMMs stream faster; off for cpu, where a stacked decode step "
             "ran no faster: docs/lowering.md)"),
    cl::init(false), cl::cat(category));

static cl::opt<bool> panelWeights(
    "panel-weights",
    cl::desc("lay out the [k, n] weights that only GEMMs read in column "
             "panels, for the loader to make (cpu); false keeps them "
             "row-major, to compare against"),
    cl::init(true), cl::cat(category));

static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("run MLIR's verifier after every pass, as tp-opt does; off "
             "(default): the parsed input and what tp-compile writes (the "
             "sharded or the lowered module) are verified, the per-pass runs "
             "cost more than the passes of a deep model"),
    cl::init(false), cl::cat(category));

static cl::OptionCategory cudaCategory("tp-compile options for --backend cuda");
static cl::opt<std::string> cudaChip("cuda-chip", cl::desc("GPU architecture"),
                                     cl::init("sm_90"), cl::cat(cudaCategory));
static cl::opt<std::string>
    cudaToolkit("cuda-toolkit",
                cl::desc("CUDA toolkit for ptxas and libdevice"),
                cl::init(TP_CUDA_TOOLKIT_ROOT), cl::cat(cudaCategory));
static cl::opt<std::string> gpuFormat(
    "gpu-format",
    cl::desc("kernel format: bin (cubin, needs ptxas), isa (PTX, compiled at "
             "load time), fatbin; default bin when the toolkit has ptxas"),
    cl::init(""), cl::cat(cudaCategory));
static cl::opt<int64_t> cudaSplitReductionsMin(
    "cuda-split-reductions-min", cl::Hidden,
    cl::desc("split reductions over at least this many elements into two "
             "stages"),
    cl::init(tp::kSplitReductionsMin), cl::cat(cudaCategory));
static cl::opt<bool> cudaRowKernels(
    "cuda-row-kernels",
    cl::desc("run a reduction and the ops beside it on its rows as one "
             "kernel, a block per row; false: a kernel per op, to compare"),
    cl::init(true), cl::cat(cudaCategory));

static LogicalResult fail(const Twine &message) {
  llvm::errs() << "tp-compile: " << message << "\n";
  return failure();
}

static void addLowering(PassManager &pm) {
  tp::TensorSimplificationOptions tensor;
  tensor.foldBroadcastIntoMatmul = foldBroadcastIntoMatmul;
  tensor.outlineRepeatedBlocks = outlineRepeatedBlocks;
  if (backend != "cuda")
    return tp::buildCpuLoweringPipeline(pm, tensor, panelWeights);
  tp::CudaLoweringOptions cuda;
  cuda.tensor = tensor;
  cuda.gemmDtype = gemmDtype;
  cuda.chip = cudaChip;
  cuda.toolkitPath = cudaToolkit;
  cuda.format = gpuFormat;
  cuda.splitReductionsMin = cudaSplitReductionsMin;
  cuda.rowKernels = cudaRowKernels;
  if (cuda.format.empty())
    cuda.format =
        !cuda.toolkitPath.empty() &&
                llvm::sys::fs::can_execute(cuda.toolkitPath + "/bin/ptxas")
            ? "bin"
            : "isa";
  tp::buildCudaLoweringPipeline(pm, cuda);
}

/// Without --verify-each, the module is verified where tp-compile leaves
/// MLIR: once it is written out or translated to LLVM IR.
static LogicalResult verifyOnce(ModuleOp module, TimingScope &stage) {
  if (verifyEach)
    return success();
  TimingScope timer = stage.nest("verify");
  return verify(module);
}

/// LLVM IR, an object or the shared object of a lowered module.
static LogicalResult writeArtifact(ModuleOp module, TimingScope &timing) {
  tp::ModelLinkOptions link;
  link.runtimeDir = runtimeDir;
  link.runtimeLibrary = backend == "cuda" ? "tprt_cuda" : "tprt";
  // (CUDA was not found at build time, say.)
  link.requireRuntime = backend == "cuda";
  link.optLevel = optLevel;
  link.codegenOptLevel = codegenOptLevel;
  link.timing = &timing;
  tp::ModelArtifact artifact = emit == Emit::LLVMIR ? tp::ModelArtifact::LLVMIR
                               : emit == Emit::Object
                                   ? tp::ModelArtifact::Object
                                   : tp::ModelArtifact::SharedObject;
  return tp::writeModel(module, artifact, outputFile, link);
}

static LogicalResult compile(MLIRContext &context, TimingScope &timing) {
  if (tpSize < 1)
    return fail("--tp-size must be at least 1, got " + Twine(tpSize));
  if (backend != "cpu" && backend != "cuda")
    return fail("unknown backend '" + backend + "' (cpu or cuda)");
  if (gemmDtype != "f32" && gemmDtype != "bf16")
    return fail("unknown --dtype '" + gemmDtype + "' (f32 or bf16)");
  if (gemmDtype == "bf16" && backend != "cuda")
    return fail("--dtype bf16 needs --backend cuda (the cpu runtime has fp32 "
                "GEMMs only)");
  if (from == From::Lowered && (emit == Emit::Sharded || emit == Emit::Lowered))
    return fail("--from=lowered writes --emit=llvm, obj or so");

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  TimingScope parseTimer = timing.nest("parse");
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  parseTimer.stop();
  if (!module)
    return fail("cannot parse " + inputFile);
  auto writeModule = [&]() -> LogicalResult {
    std::string error;
    auto out = openOutputFile(outputFile, &error);
    if (!out)
      return fail(error);
    module->print(out->os());
    out->keep();
    return success();
  };

  if (from == From::Lowered)
    return writeArtifact(*module, timing);

  PassManager shard(&context);
  TimingScope shardTimer = timing.nest("sharding");
  shard.enableTiming(shardTimer);
  shard.enableVerifier(verifyEach);
  // What front-ends write (TOSA, shard annotations, weights as constants)
  // to linalg first. Without --weights-out the weights whose values the
  // model holds are compiled into it; those it lacks (elided resources)
  // become arguments either way.
  tp::ImportOptions importOptions;
  importOptions.weights = weightsOut;
  importOptions.keepWeightValues = weightsOut.empty();
  importOptions.tosa = tp::containsTosa(*module);
  tp::buildImportPipeline(shard, importOptions);
  shard.addPass(tp::createTPShard({tpSize, allowFallback}));
  if (failed(shard.run(*module)))
    return fail("sharding failed on " + inputFile);
  if (emit == Emit::Sharded) {
    if (failed(verifyOnce(*module, shardTimer)))
      return fail("sharding failed on " + inputFile);
    shardTimer.stop();
    return writeModule();
  }
  shardTimer.stop();

  PassManager lower(&context);
  TimingScope lowerTimer = timing.nest("lowering");
  lower.enableTiming(lowerTimer);
  lower.enableVerifier(verifyEach);
  if (stackWeights.getNumOccurrences() ? stackWeights : backend == "cuda")
    lower.addPass(tp::createTPStackWeights());
  lower.addPass(tp::createTPModelManifest({backend}));
  addLowering(lower);
  lower.addPass(tp::createTPModelInterface());
  // The entry's calls of the outlined layers as one loop: LLVM's share of
  // the compile time is then the same at any depth.
  if (outlineRepeatedBlocks)
    lower.addPass(tp::createTPRollRepeatedCalls());
  if (failed(lower.run(*module)) || failed(verifyOnce(*module, lowerTimer)))
    return fail("lowering failed on " + inputFile);
  lowerTimer.stop();
  if (emit == Emit::Lowered)
    return writeModule();
  return writeArtifact(*module, timing);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --mlir-timing: each step's wall time (bench/compile/tp_compile_time.sh).
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions({&category, &cudaCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "tp-compile: shard a linalg model for N ranks and build the per-rank "
      "shared object\n");
  DialectRegistry registry;
  tp::registerLoweringDialects(registry);
  tp::registerCudaLoweringDialects(registry);
  tp::registerModelTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(printOpOnDiagnostic);
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  return failed(compile(context, timing)) ? 1 : 0;
}
