//===- tp-compile.cpp - MLIR model -> per-rank shared object --------------===//
//
//   tp-compile model.mlir --tp-size N --backend cpu -o model.so
//
// In one process: tp-shard, the CPU lowering (tprt calls for GEMMs and
// collectives, loops for the rest), LLVM IR, -O3, an object file, and an
// lld link into a shared object that exports the manifest and the entry
// point of runtime/include/tprt/model.h.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/CudaPipeline.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"
#include "tp/InitAll.h"
#include "tp/Transforms/Passes.h"
#include "tprt/tprt.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/Driver.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

LLD_HAS_DRIVER(elf)

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("output file"),
                                       cl::value_desc("model.so"),
                                       cl::init("model.so"));
static cl::opt<int64_t> tpSize("tp-size", cl::desc("number of ranks"),
                               cl::init(1));
static cl::opt<std::string> backend("backend", cl::desc("cpu or cuda"),
                                    cl::init("cpu"));
static cl::opt<std::string> weightsOut(
    "weights-out",
    cl::desc("move the weights given as constants (as torch-mlir emits them) "
             "into arguments, so that they are cut, and write their values "
             "to this safetensors file for tp-run --weights"),
    cl::value_desc("weights.safetensors"), cl::init(""));
static cl::opt<bool> allowFallback(
    "allow-fallback", cl::desc("accept cuts that need extra communication"),
    cl::init(false));
enum class Emit { Sharded, Lowered, LLVMIR, Object, Shared };
static cl::opt<Emit> emit(
    "emit", cl::desc("what to write"), cl::init(Emit::Shared),
    cl::values(clEnumValN(Emit::Sharded, "sharded", "the per-rank MLIR"),
               clEnumValN(Emit::Lowered, "lowered", "the LLVM-dialect MLIR"),
               clEnumValN(Emit::LLVMIR, "llvm", "LLVM IR"),
               clEnumValN(Emit::Object, "obj", "an object file"),
               clEnumValN(Emit::Shared, "so", "a shared object (default)")));
static cl::opt<std::string> runtimeDir(
    "runtime-dir", cl::desc("where libtprt.so is (linked as DT_NEEDED)"),
    cl::init(TP_RUNTIME_LIB_DIR));

static cl::opt<std::string> cudaChip("cuda-chip",
                                     cl::desc("GPU architecture (cuda)"),
                                     cl::init("sm_90"));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit", cl::desc("CUDA toolkit for ptxas and libdevice (cuda)"),
    cl::init(TP_CUDA_TOOLKIT_ROOT));
static cl::opt<std::string> gpuFormat(
    "gpu-format",
    cl::desc("kernel format (cuda): bin (cubin, needs ptxas), isa (PTX, "
             "compiled at load time), fatbin; default bin when the toolkit "
             "has ptxas"),
    cl::init(""));

static cl::opt<std::string> gemmDtype(
    "dtype",
    cl::desc("GEMM input type: f32, or bf16 (cuda: operands rounded to bf16, "
             "fp32 accumulation and activations)"),
    cl::init("f32"));
static cl::opt<int64_t> cudaSplitReductionsMin(
    "cuda-split-reductions-min", cl::Hidden,
    cl::desc("cuda: split reductions over at least this many elements into "
             "two stages"),
    cl::init(tp::kSplitReductionsMin));
static cl::opt<bool> cudaEmulateOnHost(
    "cuda-emulate-on-host", cl::Hidden,
    cl::desc("test only: the cuda lowering's tiled parallel loops, lowered "
             "for the CPU (with --backend cpu: run by tp-run on libtprt)"),
    cl::init(false));

// The runtime ABI the lowering emits calls for (the manifest says which).
static constexpr int64_t kAbiVersion = TPRT_ABI_VERSION;

static LogicalResult fail(const Twine &message) {
  llvm::errs() << "tp-compile: " << message << "\n";
  return failure();
}

/// The one function with a body: the model's forward pass.
static FailureOr<func::FuncOp> findEntry(ModuleOp module) {
  func::FuncOp entry;
  for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    if (entry)
      return fn.emitError("tp-compile takes one function with a body; also "
                          "found @")
             << entry.getName();
    entry = fn;
  }
  if (!entry)
    return module.emitError("no function with a body to compile");
  return entry;
}

static llvm::json::Array shapeJson(ArrayRef<int64_t> shape) {
  llvm::json::Array array;
  for (int64_t d : shape)
    array.push_back(d);
  return array;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// The manifest of runtime/include/tprt/model.h, from the per-rank program.
static FailureOr<llvm::json::Object> buildManifest(func::FuncOp fn) {
  llvm::json::Array args, results;
  // A checkpoint holds one tensor per name: two arguments of one name read
  // the same tensor, so they must take the same full shape.
  llvm::StringMap<std::pair<unsigned, SmallVector<int64_t>>> named;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return fn.emitError("argument ")
             << i << " must be a static f32 tensor, got " << arg.getType();
    auto name = fn.getArgAttrOfType<StringAttr>(i, tp::TPDialect::getNameAttrName());
    auto shard = fn.getArgAttrOfType<tp::ShardAttr>(
        i, tp::TPDialect::getShardAttrName());
    SmallVector<int64_t> full(type.getShape());
    llvm::json::Value shardJson = nullptr;
    if (shard && shard.isSplit()) {
      full[shard.getDim()] *= tpSize;
      shardJson = llvm::json::Object{{"dim", shard.getDim()},
                                     {"outer", shard.getOuter()}};
    }
    if (name) {
      auto [it, inserted] = named.try_emplace(name, i, full);
      if (!inserted && it->second.second != full)
        return fn.emitError("arguments ")
               << it->second.first << " and " << i << " are both named '"
               << name.getValue() << "' but take different shapes: "
               << shapeString(it->second.second) << " and "
               << shapeString(full);
    }
    args.push_back(llvm::json::Object{
        {"name", name ? name.str() : ("arg" + Twine(i)).str()},
        {"named", bool(name)},
        {"role", i == 0 ? "input" : "weight"},
        {"dtype", "f32"},
        {"shape", shapeJson(full)},
        {"local_shape", shapeJson(type.getShape())},
        {"shard", std::move(shardJson)}});
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return fn.emitError("result ")
             << i << " must be a static f32 tensor, got " << t;
    results.push_back(llvm::json::Object{{"name", ("result" + Twine(i)).str()},
                                         {"dtype", "f32"},
                                         {"shape", shapeJson(type.getShape())}});
  }
  return llvm::json::Object{{"abi_version", kAbiVersion},
                            {"backend", backend.getValue()},
                            {"tp_size", tpSize.getValue()},
                            {"function", fn.getName().str()},
                            {"args", std::move(args)},
                            {"results", std::move(results)}};
}

/// The manifest's text, once the lowering has said which weights it stores
/// in bf16 (tp::kBf16ArgsAttrName, which LLVM IR has no use for).
static std::string finishManifest(llvm::json::Object manifest,
                                  ModuleOp module) {
  if (auto bf16 = module->getAttrOfType<DenseI64ArrayAttr>(
          tp::kBf16ArgsAttrName)) {
    llvm::json::Array *args = manifest.getArray("args");
    for (int64_t i : bf16.asArrayRef()) {
      assert(i >= 0 && size_t(i) < args->size() && "not an argument");
      (*(*args)[i].getAsObject())["dtype"] = "bf16";
    }
    module->removeAttr(tp::kBf16ArgsAttrName);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(manifest));
  return text;
}

/// Adds `tp_model_manifest()` and `tp_model_forward(void **args)`, which
/// unpacks the descriptor pointers for `_mlir_ciface_<entry>`.
static void addModelInterface(ModuleOp module, StringRef entry,
                              unsigned numBuffers, StringRef manifest) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto voidTy = LLVM::LLVMVoidType::get(ctx);

  std::string text = manifest.str();
  text.push_back('\0');
  auto strTy = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
  LLVM::GlobalOp::create(b, loc, strTy, /*isConstant=*/true,
                         LLVM::Linkage::Internal, "tp_manifest_text",
                         b.getStringAttr(text));
  auto manifestFn = LLVM::LLVMFuncOp::create(
      b, loc, "tp_model_manifest", LLVM::LLVMFunctionType::get(ptr, {}));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(manifestFn.addEntryBlock(b));
    Value address =
        LLVM::AddressOfOp::create(b, loc, ptr, "tp_manifest_text");
    LLVM::ReturnOp::create(b, loc, address);
  }

  auto forwardFn = LLVM::LLVMFuncOp::create(
      b, loc, "tp_model_forward", LLVM::LLVMFunctionType::get(voidTy, {ptr}));
  OpBuilder::InsertionGuard guard(b);
  Block *body = forwardFn.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> descriptors;
  for (unsigned i = 0; i < numBuffers; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    descriptors.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(
      ("_mlir_ciface_" + entry).str());
  LLVM::CallOp::create(b, loc, callee, descriptors);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

static std::unique_ptr<llvm::TargetMachine> hostMachine() {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    (void)fail("no LLVM target for " + triple.str() + ": " + error);
    return nullptr;
  }
  llvm::TargetOptions options;
  // Constructors (the cuda model's kernel loading) in .init_array: the
  // loader runs only that; .ctors would need crtbegin.o, which lld does not
  // link here.
  options.UseInitArray = true;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), "", options,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

static void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

static LogicalResult writeObject(llvm::Module &module,
                                 llvm::TargetMachine &machine,
                                 StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write " + path + ": " + ec.message());
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return fail("the target cannot emit object files");
  pm.run(module);
  return success();
}

/// Links the object into a shared object with lld, in this process.
static LogicalResult linkShared(StringRef object, StringRef output) {
  std::string libDir = runtimeDir;
  std::string libArg = "-L" + libDir, rpath = "-rpath=" + libDir;
  std::string out = output.str(), obj = object.str();
  SmallVector<const char *> args{"ld.lld", "-shared", "-o", out.c_str(),
                                 obj.c_str()};
  // lld has no default search path; libm is where the system keeps it.
  for (const char *dir : {"-L/usr/lib/x86_64-linux-gnu", "-L/usr/lib64",
                          "-L/usr/lib"})
    if (llvm::sys::fs::is_directory(dir + 2))
      args.push_back(dir);
  args.push_back("-lm");
  // DT_NEEDED on the runtime, so the model finds it wherever it is loaded.
  const char *runtimeLib = backend == "cuda" ? "-ltprt_cuda" : "-ltprt";
  std::string runtimeFile =
      libDir + (backend == "cuda" ? "/libtprt_cuda.so" : "/libtprt.so");
  if (llvm::sys::fs::exists(runtimeFile))
    args.append({libArg.c_str(), runtimeLib, rpath.c_str()});
  else if (backend == "cuda")
    return fail("the cuda backend links " + runtimeFile +
                ", which is missing (CUDA was not found at build time?)");
  // Strided memref copies (tensor.concat, say) call MLIR's memrefCopy. Only
  // then: the library pulls in libMLIR and libLLVM, which a model that never
  // calls it (every cuda model) should not need where it is deployed.
  args.append({"--as-needed", "-L" TP_MLIR_LIB_DIR, "-lmlir_c_runner_utils",
               "-rpath=" TP_MLIR_LIB_DIR, "--no-as-needed"});
  std::string messages;
  llvm::raw_string_ostream os(messages);
  lld::Result result =
      lld::lldMain(args, os, os, {{lld::Gnu, &lld::elf::link}});
  if (result.retCode != 0)
    return fail("linking " + output + " failed: " + messages);
  return success();
}

static LogicalResult compile(MLIRContext &context) {
  if (tpSize < 1)
    return fail("--tp-size must be at least 1, got " + Twine(tpSize));
  if (backend != "cpu" && backend != "cuda")
    return fail("unknown backend '" + backend + "' (cpu or cuda)");
  if (gemmDtype != "f32" && gemmDtype != "bf16")
    return fail("unknown --dtype '" + gemmDtype + "' (f32 or bf16)");
  if (gemmDtype == "bf16" && backend != "cuda")
    return fail("--dtype bf16 needs --backend cuda (the cpu runtime has fp32 "
                "GEMMs only)");

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);
  FailureOr<func::FuncOp> entry = findEntry(*module);
  if (failed(entry))
    return failure();
  std::string entryName = entry->getName().str();

  PassManager shard(&context);
  if (!weightsOut.empty())
    shard.addPass(tp::createTPExternalizeWeights({weightsOut}));
  tp::TPShardOptions options;
  options.tpSize = tpSize;
  options.allowFallback = allowFallback;
  shard.addPass(tp::createTPShard(options));
  if (failed(shard.run(*module)))
    return fail("sharding failed on " + inputFile);
  auto fn = module->lookupSymbol<func::FuncOp>(entryName);
  FailureOr<llvm::json::Object> manifest = buildManifest(fn);
  if (failed(manifest))
    return failure();
  unsigned numBuffers = fn.getNumArguments() + fn.getNumResults();
  auto writeModule = [&]() -> LogicalResult {
    std::string error;
    auto out = openOutputFile(outputFile, &error);
    if (!out)
      return fail(error);
    module->print(out->os());
    out->keep();
    return success();
  };
  if (emit == Emit::Sharded)
    return writeModule();

  // The manifest carries what the tp argument attributes said; the LLVM
  // lowering has no use for them.
  fn.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  fn->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  PassManager lower(&context);
  if (backend == "cuda" || cudaEmulateOnHost) {
    tp::CudaLoweringOptions cuda;
    using Emulation = tp::CudaLoweringOptions::Emulation;
    if (cudaEmulateOnHost)
      cuda.emulation = backend == "cpu" ? Emulation::WithCpuRuntime
                                        : Emulation::WithCudaRuntime;
    cuda.gemmDtype = gemmDtype;
    cuda.chip = cudaChip;
    cuda.toolkitPath = cudaToolkit;
    cuda.format = gpuFormat;
    cuda.splitReductionsMin = cudaSplitReductionsMin;
    if (cuda.format.empty())
      cuda.format = !cuda.toolkitPath.empty() &&
                            llvm::sys::fs::can_execute(cuda.toolkitPath +
                                                       "/bin/ptxas")
                        ? "bin"
                        : "isa";
    tp::buildCudaLoweringPipeline(lower, cuda);
  } else {
    tp::buildCpuLoweringPipeline(lower);
  }
  if (failed(lower.run(*module)))
    return fail("lowering failed on " + inputFile);
  addModelInterface(*module, entryName, numBuffers,
                    finishManifest(std::move(*manifest), *module));
  if (emit == Emit::Lowered)
    return writeModule();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "tp-model");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  std::unique_ptr<llvm::TargetMachine> machine = hostMachine();
  if (!machine)
    return failure();
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());
  optimize(*llvmModule, *machine);
  if (emit == Emit::LLVMIR) {
    std::error_code ec;
    llvm::raw_fd_ostream os(outputFile, ec);
    if (ec)
      return fail("cannot write " + outputFile + ": " + ec.message());
    llvmModule->print(os, nullptr);
    return success();
  }
  if (emit == Emit::Object)
    return writeObject(*llvmModule, *machine, outputFile);

  SmallString<128> object;
  if (llvm::sys::fs::createTemporaryFile("tp-model", "o", object))
    return fail("cannot create a temporary object file");
  llvm::FileRemover removeObject(object);
  if (failed(writeObject(*llvmModule, *machine, object)))
    return failure();
  return linkShared(object, outputFile);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  cl::ParseCommandLineOptions(
      argc, argv,
      "tp-compile: shard a linalg model for N ranks and build the per-rank "
      "shared object\n");
  DialectRegistry registry;
  tp::registerLoweringDialects(registry);
  tp::registerCudaLoweringDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A diagnostic at a model's function would print the whole model.
  context.printOpOnDiagnostic(false);
  return failed(compile(context)) ? 1 : 0;
}
