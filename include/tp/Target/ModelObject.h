//===- ModelObject.h - a lowered model as LLVM IR, object or .so -*- C++
//-*-===//
//
// The last steps of tp-compile, for any pipeline that ends in a module of
// the LLVM dialect with the model interface (tp-model-interface): LLVM IR
// for the host, optimised (-O2 by default), an object file, and an in-process
// lld link into a shared object that tp-run loads.
//
//===----------------------------------------------------------------------===//

#ifndef TP_TARGET_MODELOBJECT_H
#define TP_TARGET_MODELOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tp {

enum class ModelArtifact { LLVMIR, Object, SharedObject };

struct ModelLinkOptions {
  /// Where the runtime library is; it becomes a DT_NEEDED entry and the
  /// model's RUNPATH.
  std::string runtimeDir;
  /// `tprt` (cpu) or `tprt_cuda` (cuda).
  std::string runtimeLibrary = "tprt";
  /// Fail when the runtime library is missing rather than link without it.
  bool requireRuntime = false;
  /// LLVM's optimisation level, 0 to 3. 2: less compile time than 3 for the
  /// same forward pass (docs/bench-opt-level.md).
  unsigned optLevel = 2;
  /// Code generation's level (instruction selection, scheduling, register
  /// allocation), 0 to 3; -1: optLevel, at most 1. Level 2 adds the post-RA
  /// list scheduler, whose time grows with the square of a basic block's
  /// length (the entry of a deep model is one block), for no measurable
  /// gain in the forward pass (docs/bench-opt-level.md).
  int codegenOptLevel = -1;
  /// Where to time the steps (translation, LLVM optimisation, object,
  /// link), as tp-compile --mlir-timing reports them; none by default.
  TimingScope *timing = nullptr;
};

/// Translates `module` (LLVM dialect) for the host, optimises it at
/// `optLevel` and
/// writes `artifact` to `path`. Errors are reported at the module.
LogicalResult writeModel(ModuleOp module, ModelArtifact artifact,
                         StringRef path, const ModelLinkOptions &options);

/// The translations writeModel needs (builtin and LLVM dialects).
void registerModelTranslations(DialectRegistry &registry);

} // namespace mlir::tp

#endif // TP_TARGET_MODELOBJECT_H
