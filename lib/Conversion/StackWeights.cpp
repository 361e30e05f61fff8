//===- StackWeights.cpp - one GEMM over the weights of one input ----------===//
//
// q, k and v (and gate and up) are GEMMs of one activation by weights the
// checkpoint stores apart, which the runtime would run as a call each. A
// decode step's GEMMs are one row by a weight, and a wider weight streams
// faster: on the H200 cuBLAS read a 4096 x 4096 bf16 weight at 2.5 TB/s and
// the wider ones at 3.5-3.9 (docs/gpu.md). On the sharded entry functions,
// before the manifest, the weights of GEMMs that read the same activation
// become one argument, stacked along n, which the loader builds from each
// weight's slice for the rank (the manifest's "stack"); one GEMM's result is
// sliced into theirs. vLLM loads q|k|v and gate|up so (QKVParallelLinear,
// MergedColumnParallelLinear).
//
//===----------------------------------------------------------------------===//

#include "CopyGenerics.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSTACKWEIGHTS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// A GEMM `lhs x op(weight)` whose weight a stack may take: a named
/// argument of the function that this GEMM alone reads, as stored [k, n]
/// or transposed from [n, k], into a zero-filled (or constant) init.
struct Member {
  linalg::MatmulOp gemm;
  BlockArgument weight;
  /// The dimension of the weight that is the GEMM's n: 0 when the GEMM
  /// reads it transposed.
  int64_t nDim;
  /// The GEMM's init and the constant it fills it with.
  linalg::FillOp fill;
  Attribute init;
};

/// What GEMMs must share to be stacked: the activation (up to identical
/// reshapes of one value, as each projection collapses [B, S, d] for its
/// own GEMM), the weight's layout, the init's value and the types.
using GroupKey = std::tuple<Value, Attribute, int64_t, Attribute, Type, Type>;

std::optional<Member> asMember(linalg::MatmulOp gemm, func::FuncOp fn) {
  if (!gemm.hasPureTensorSemantics() || gemm.hasUserDefinedMaps() ||
      !cast<ShapedType>(gemm.getResultTypes()[0]).hasStaticShape())
    return std::nullopt;
  Value rhs = gemm.getInputs()[1];
  int64_t nDim = 1;
  if (Value source = tp::getSwappedSource(rhs)) {
    if (!rhs.hasOneUse())
      return std::nullopt;
    nDim = 0;
    rhs = source;
  }
  auto weight = dyn_cast<BlockArgument>(rhs);
  if (!weight || weight.getOwner() != &fn.getBody().front() ||
      !weight.hasOneUse() ||
      cast<ShapedType>(weight.getType()).getRank() != 2 ||
      !cast<ShapedType>(weight.getType()).hasStaticShape())
    return std::nullopt;
  // A named weight alone: an unnamed one binds by its position, and a
  // cache or a stack is not a GEMM's weight.
  unsigned i = weight.getArgNumber();
  if (!fn.getArgAttr(i, TPDialect::getNameAttrName()) ||
      fn.getArgAttr(i, TPDialect::getPositionsAttrName()) ||
      fn.getArgAttr(i, TPDialect::getStackAttrName()))
    return std::nullopt;
  auto fill = gemm.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  Attribute init;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&init)))
    return std::nullopt;
  return Member{gemm, weight, nDim, fill, init};
}

GroupKey keyOf(Member member) {
  linalg::MatmulOp gemm = member.gemm;
  Value lhs = gemm.getInputs()[0];
  Attribute reshape;
  if (auto collapse = lhs.getDefiningOp<tensor::CollapseShapeOp>()) {
    lhs = collapse.getSrc();
    reshape = collapse.getReassociationAttr();
  }
  return {lhs,
          reshape,
          member.nDim,
          member.init,
          getElementTypeOrSelf(member.weight.getType()),
          getElementTypeOrSelf(gemm.getResultTypes()[0])};
}

/// Erases `op` and then what computed its operands for it alone (the
/// weight's transpose, the init's fill, the activation's reshape).
void eraseWithDeadOperands(Operation *op) {
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty()) {
    Operation *dead = worklist.pop_back_val();
    SmallVector<Value> operands(dead->getOperands());
    dead->erase();
    for (Value operand : operands)
      if (Operation *def = operand.getDefiningOp();
          def && isOpTriviallyDead(def) && !llvm::is_contained(worklist, def))
        worklist.push_back(def);
  }
}

/// The name of a stack of tensors labelled `labels` (a name, and "@row"
/// for rows of a packed tensor): what they differ in, in braces, between
/// what they share ("model.layers.0.self_attn.{q,k,v}_proj.weight").
std::string stackName(ArrayRef<std::string> labels) {
  StringRef first = labels.front();
  size_t prefix = first.size(), suffix = first.size();
  for (StringRef label : labels.drop_front()) {
    prefix = std::min(
        prefix, size_t(llvm::mismatch(first, label).first - first.begin()));
    size_t common = 0;
    while (common < std::min(first.size(), label.size()) &&
           first[first.size() - 1 - common] == label[label.size() - 1 - common])
      ++common;
    suffix = std::min(suffix, common);
  }
  for (StringRef label : labels)
    suffix = std::min(suffix, label.size() - prefix);
  std::string name = first.take_front(prefix).str() + "{";
  for (auto [k, label] : llvm::enumerate(labels))
    name += (k ? "," : "") +
            StringRef(label).drop_front(prefix).drop_back(suffix).str();
  return name + "}" + first.take_back(suffix).str();
}

/// Replaces the GEMMs of `group` (in block order, two or more) by one over
/// a new argument that stacks their weights.
void stack(func::FuncOp fn, MutableArrayRef<Member> group) {
  MLIRContext *ctx = fn.getContext();
  Member &first = group.front();
  int64_t nDim = first.nDim;
  auto weightType = cast<RankedTensorType>(first.weight.getType());
  SmallVector<int64_t> stackedShape(weightType.getShape());
  stackedShape[nDim] = 0;
  SmallVector<Attribute> parts;
  SmallVector<std::string> labels;
  unsigned index = first.weight.getArgNumber();
  for (Member &member : group) {
    unsigned i = member.weight.getArgNumber();
    int64_t size = cast<ShapedType>(member.weight.getType()).getDimSize(nDim);
    stackedShape[nDim] += size;
    NamedAttrList attrs(fn.getArgAttrDict(i));
    attrs.set("size", IntegerAttr::get(IntegerType::get(ctx, 64), size));
    parts.push_back(attrs.getDictionary(ctx));
    std::string label =
        fn.getArgAttrOfType<StringAttr>(i, TPDialect::getNameAttrName()).str();
    if (auto offset = fn.getArgAttrOfType<IntegerAttr>(
            i, TPDialect::getCheckpointOffsetAttrName()))
      label += "@" + std::to_string(offset.getInt());
    labels.push_back(label);
    index = std::min(index, i);
  }
  OpBuilder b(ctx);
  NamedAttrList stackAttrs;
  stackAttrs.set(TPDialect::getNameAttrName(),
                 b.getStringAttr(stackName(labels)));
  stackAttrs.set(
      TPDialect::getStackAttrName(),
      b.getDictionaryAttr({b.getNamedAttr("dim", b.getI64IntegerAttr(nDim)),
                           b.getNamedAttr("parts", b.getArrayAttr(parts))}));
  auto stackedType = weightType.clone(stackedShape);
  if (failed(fn.insertArgument(index, stackedType,
                               stackAttrs.getDictionary(ctx),
                               first.weight.getLoc())))
    llvm_unreachable("a function on tensors takes another argument");
  Value stacked = fn.getArgument(index);

  b.setInsertionPoint(first.gemm);
  Location loc = first.gemm.getLoc();
  Value rhs = stacked;
  if (nDim == 0) {
    Value empty =
        tensor::EmptyOp::create(b, loc, {stackedShape[1], stackedShape[0]},
                                weightType.getElementType());
    rhs = linalg::TransposeOp::create(b, loc, stacked, empty,
                                      ArrayRef<int64_t>{1, 0})
              ->getResult(0);
  }
  auto resultType = cast<RankedTensorType>(first.gemm.getResultTypes()[0]);
  int64_t rows = resultType.getDimSize(0);
  int64_t columns = stackedShape[nDim];
  Value init = linalg::FillOp::create(
                   b, loc, first.fill.getInputs()[0],
                   tensor::EmptyOp::create(b, loc, {rows, columns},
                                           resultType.getElementType())
                       .getResult())
                   .getResult(0);
  Value product =
      linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                               ValueRange{first.gemm.getInputs()[0], rhs},
                               ValueRange{init})
          .getResult(0);
  // The slices stand before the GEMMs they replace; those go after.
  SmallVector<Value> slices;
  int64_t offset = 0;
  for (Member &member : group) {
    int64_t size =
        cast<ShapedType>(member.gemm.getResultTypes()[0]).getDimSize(1);
    slices.push_back(tensor::ExtractSliceOp::create(
        b, loc, product,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(size)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)}));
    offset += size;
  }
  llvm::BitVector erased(fn.getNumArguments());
  for (auto [member, slice] : llvm::zip_equal(group, slices)) {
    member.gemm.getResult(0).replaceAllUsesWith(slice);
    eraseWithDeadOperands(member.gemm);
    erased.set(member.weight.getArgNumber());
  }
  if (failed(fn.eraseArguments(erased)))
    llvm_unreachable("the stacked weights have no uses left");
}

struct TPStackWeightsPass
    : public tp::impl::TPStackWeightsBase<TPStackWeightsPass> {
  void runOnOperation() override {
    for (func::FuncOp fn : getOperation().getOps<func::FuncOp>()) {
      // The model's entries, whose signature the manifest gives: a
      // function something calls keeps its own.
      if (fn.isExternal() || fn.isPrivate() ||
          !SymbolTable::symbolKnownUseEmpty(fn, getOperation()))
        continue;
      llvm::MapVector<GroupKey, SmallVector<Member>> groups;
      for (auto gemm : fn.getBody().front().getOps<linalg::MatmulOp>())
        if (std::optional<Member> member = asMember(gemm, fn))
          groups[keyOf(*member)].push_back(*member);
      for (auto &[key, group] : groups)
        if (group.size() > 1)
          stack(fn, group);
    }
  }
};

} // namespace
