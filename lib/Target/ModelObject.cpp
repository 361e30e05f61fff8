//===- ModelObject.cpp - a lowered model as LLVM IR, object or .so --------===//

#include "tp/Target/ModelObject.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/Driver.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

LLD_HAS_DRIVER(elf)

using namespace mlir;
using namespace mlir::tp;

void mlir::tp::registerModelTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

static std::unique_ptr<llvm::TargetMachine> hostMachine(ModuleOp module,
                                                        unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    module.emitError() << "no LLVM target for " << triple.str() << ": "
                       << error;
    return nullptr;
  }
  llvm::TargetOptions options;
  // Constructors (the cuda model's kernel loading) in .init_array: the
  // loader runs only that; .ctors would need crtbegin.o, which lld does not
  // link here.
  options.UseInitArray = true;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(triple, llvm::sys::getHostCPUName(), "",
                                  options, llvm::Reloc::PIC_, std::nullopt,
                                  llvm::CodeGenOpt::getLevel(optLevel).value_or(
                                      llvm::CodeGenOptLevel::Aggressive)));
}

static void optimize(llvm::Module &module, llvm::TargetMachine &machine,
                     unsigned optLevel) {
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
  const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  // O0 has its own pipeline builder.
  if (optLevel == 0)
    pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0).run(module, mam);
  else
    pb.buildPerModuleDefaultPipeline(levels[optLevel]).run(module, mam);
}

static LogicalResult writeObject(ModuleOp at, llvm::Module &module,
                                 llvm::TargetMachine &machine, StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return at.emitError() << "cannot write " << path << ": " << ec.message();
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return at.emitError("the target cannot emit object files");
  pm.run(module);
  return success();
}

/// Links `object` into a shared object with lld, in this process.
static LogicalResult linkShared(ModuleOp at, StringRef object, StringRef output,
                                const ModelLinkOptions &options) {
  std::string libArg = "-L" + options.runtimeDir;
  std::string rpath = "-rpath=" + options.runtimeDir;
  std::string runtimeLib = "-l" + options.runtimeLibrary;
  std::string out = output.str(), obj = object.str();
  SmallVector<const char *> args{"ld.lld", "-shared", "-o", out.c_str(),
                                 obj.c_str()};
  // lld has no default search path; libm is where the system keeps it.
  for (const char *dir :
       {"-L/usr/lib/x86_64-linux-gnu", "-L/usr/lib64", "-L/usr/lib"})
    if (llvm::sys::fs::is_directory(dir + 2))
      args.push_back(dir);
  args.push_back("-lm");
  // DT_NEEDED on the runtime, so the model finds it wherever it is loaded.
  std::string runtimeFile =
      options.runtimeDir + "/lib" + options.runtimeLibrary + ".so";
  if (llvm::sys::fs::exists(runtimeFile))
    args.append({libArg.c_str(), runtimeLib.c_str(), rpath.c_str()});
  else if (options.requireRuntime)
    return at.emitError() << "the model links " << runtimeFile
                          << ", which is missing";
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
    return at.emitError() << "linking " << output << " failed: " << messages;
  return success();
}

LogicalResult mlir::tp::writeModel(ModuleOp module, ModelArtifact artifact,
                                   StringRef path,
                                   const ModelLinkOptions &options) {
  // A launcher finds a model by this symbol, and its entries by the
  // symbols the manifest names.
  if (!module.lookupSymbol("tp_model_manifest"))
    return module.emitError() << "no @tp_model_manifest: not a model "
                                 "(tp-model-interface adds the model "
                                 "interface)";
  TimingScope noTiming;
  TimingScope &timing = options.timing ? *options.timing : noTiming;
  llvm::LLVMContext llvmContext;
  TimingScope translateTimer = timing.nest("translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "tp-model");
  translateTimer.stop();
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  if (options.optLevel > 3)
    return module.emitError() << "optimisation level " << options.optLevel
                              << " is not one of 0, 1, 2, 3";
  int codegenLevel = options.codegenOptLevel < 0
                         ? std::min<int>(options.optLevel, 1)
                         : options.codegenOptLevel;
  if (codegenLevel > 3)
    return module.emitError() << "code generation level " << codegenLevel
                              << " is not one of 0, 1, 2, 3";
  std::unique_ptr<llvm::TargetMachine> machine =
      hostMachine(module, codegenLevel);
  if (!machine)
    return failure();
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());
  TimingScope optimizeTimer = timing.nest("LLVM optimisation");
  optimize(*llvmModule, *machine, options.optLevel);
  optimizeTimer.stop();

  switch (artifact) {
  case ModelArtifact::LLVMIR: {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return module.emitError()
             << "cannot write " << path << ": " << ec.message();
    llvmModule->print(os, nullptr);
    return success();
  }
  case ModelArtifact::Object: {
    TimingScope objectTimer = timing.nest("object");
    return writeObject(module, *llvmModule, *machine, path);
  }
  case ModelArtifact::SharedObject: {
    SmallString<128> object;
    if (llvm::sys::fs::createTemporaryFile("tp-model", "o", object))
      return module.emitError("cannot create a temporary object file");
    llvm::FileRemover removeObject(object);
    TimingScope objectTimer = timing.nest("object");
    if (failed(writeObject(module, *llvmModule, *machine, object)))
      return failure();
    objectTimer.stop();
    TimingScope linkTimer = timing.nest("link");
    return linkShared(module, object, path, options);
  }
  }
  llvm_unreachable("unknown artifact");
}
