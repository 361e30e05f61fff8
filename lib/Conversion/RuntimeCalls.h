//===- RuntimeCalls.h - declaring tprt entry points -------------*- C++ -*-===//

#ifndef TP_LIB_CONVERSION_RUNTIMECALLS_H
#define TP_LIB_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tp {

/// Declares the runtime function `name(argTypes) -> resultTypes` once in the
/// module nearest to `caller` (a call from a nested module must find the
/// callee in its own symbol table), with a C interface: compiled code then
/// calls `_mlir_ciface_<name>` with memref descriptors (a memref result's
/// descriptor is written through a pointer passed first), as
/// runtime/include/tprt/tprt.h declares. Without `cInterface` the call is
/// to `<name>` itself (an entry point that takes no memref).
inline func::FuncOp declareRuntimeFunc(Operation *caller, StringRef name,
                                       TypeRange argTypes,
                                       TypeRange resultTypes = {},
                                       bool cInterface = true) {
  auto module = caller->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto fn =
      func::FuncOp::create(builder, module.getLoc(), name,
                           builder.getFunctionType(argTypes, resultTypes));
  fn.setPrivate();
  if (cInterface)
    fn->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  return fn;
}

/// The runtime's name of element type `type` (f32, f64, f16, bf16 and the
/// signless i64, i32, i16, i8, i1), as tprt.h spells it in entry points and
/// manifests, or none.
inline std::optional<StringRef> runtimeTypeName(Type type) {
  if (type.isF32())
    return StringRef("f32");
  if (type.isF64())
    return StringRef("f64");
  if (type.isF16())
    return StringRef("f16");
  if (type.isBF16())
    return StringRef("bf16");
  if (type.isSignlessInteger(64))
    return StringRef("i64");
  if (type.isSignlessInteger(32))
    return StringRef("i32");
  if (type.isSignlessInteger(16))
    return StringRef("i16");
  if (type.isSignlessInteger(8))
    return StringRef("i8");
  if (type.isSignlessInteger(1))
    return StringRef("i1");
  return std::nullopt;
}

/// memref<?x...x?xT, strided<[?, ...], offset: ?>>: the type the runtime's
/// entry points take, so any view of a buffer can be passed as it is.
inline MemRefType anyStrided(unsigned rank, Type element) {
  SmallVector<int64_t> dynamic(rank, ShapedType::kDynamic);
  return MemRefType::get(dynamic, element,
                         StridedLayoutAttr::get(element.getContext(),
                                                ShapedType::kDynamic, dynamic));
}

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_RUNTIMECALLS_H
