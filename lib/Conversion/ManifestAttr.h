//===- ManifestAttr.h - the manifest the lowering carries -------*- C++ -*-===//
//
// tp-model-manifest leaves the manifest on the module as JSON text
// (`tp.manifest`); passes of the lowering amend it (in-place results,
// weights in panels) and tp-model-interface emits it.
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_CONVERSION_MANIFESTATTR_H
#define TP_LIB_CONVERSION_MANIFESTATTR_H

#include "tp/IR/TPDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir::tp {

/// The manifest on `module`, parsed: std::nullopt where it has none;
/// failure, with an error at the module, where it is not JSON with a
/// `functions` array (which manifestFunctions then returns).
inline FailureOr<std::optional<llvm::json::Value>>
readManifest(ModuleOp module) {
  auto text =
      module->getAttrOfType<StringAttr>(TPDialect::getManifestAttrName());
  if (!text)
    return std::optional<llvm::json::Value>();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    llvm::consumeError(parsed.takeError());
  else if (parsed->getAsObject() &&
           parsed->getAsObject()->getArray("functions"))
    return std::optional<llvm::json::Value>(std::move(*parsed));
  return module.emitError() << "'" << TPDialect::getManifestAttrName()
                            << "' is not a manifest (JSON with functions)";
}

inline llvm::json::Array &manifestFunctions(llvm::json::Value &manifest) {
  return *manifest.getAsObject()->getArray("functions");
}

/// Stores `manifest` on `module`.
inline void writeManifest(ModuleOp module, const llvm::json::Value &manifest) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << manifest;
  module->setAttr(TPDialect::getManifestAttrName(),
                  StringAttr::get(module.getContext(), text));
}

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_MANIFESTATTR_H
