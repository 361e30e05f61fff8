//===- Explain.cpp - print what each rank holds ---------------------------===//
//
// The trace the seed article tabulates: every op of the per-rank program,
// what each rank holds after it, and what each collective moves.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/Explain.h"

#include "tp/IR/TPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Format.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tp;

static void printCut(raw_ostream &os, DimCut cut, int64_t tpSize,
                     RankedTensorType local) {
  int64_t part = local.getDimSize(cut.dim) / cut.outer;
  int64_t parts = cut.parts(tpSize);
  std::string r =
      cut.replicas > 1 ? "(r/" + std::to_string(cut.replicas) + ")" : "r";
  os << "split dim " << cut.dim << ": rank r holds [" << r << "*" << part
     << ", (" << r << "+1)*" << part << ")";
  if (cut.outer > 1)
    os << " of each of " << cut.outer << " blocks of " << part * parts;
  else
    os << " of " << part * parts;
  if (cut.subDim < 0)
    return;
  int64_t sub = local.getDimSize(cut.subDim);
  std::string s = "(r%" + std::to_string(cut.replicas) + ")";
  os << "; dim " << cut.subDim << ": [" << s << "*" << sub << ", (" << s
     << "+1)*" << sub << ") of " << sub * cut.replicas;
}

/// "all_reduce" -> "all-reduce".
static std::string dashed(StringRef name) {
  std::string s = name.str();
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

/// "ALL-REDUCE sum", "ALL-GATHER dim 1", ...: the op's name and what it
/// combines.
static std::string collectiveLabel(Operation *op) {
  std::string s = dashed(op->getName().stripDialect().upper());
  llvm::raw_string_ostream os(s);
  if (auto kind = op->getAttrOfType<ReductionKindAttr>("kind"))
    os << " " << stringifyReductionKind(kind.getValue());
  if (auto dim = op->getAttrOfType<IntegerAttr>("dim"))
    os << " dim " << dim.getInt();
  return s;
}

/// What a region is, by the collectives it was planned with.
static StringRef regionKind(const ShardRegion &region) {
  auto has = [&](PlannedCollective::Purpose purpose) {
    return llvm::any_of(region.collectives, [&](const PlannedCollective &c) {
      return c.purpose == purpose;
    });
  };
  if (has(PlannedCollective::Purpose::Lookup))
    return "vocabulary-parallel lookup";
  if (has(PlannedCollective::Purpose::Pair))
    return "column -> row";
  bool gathers =
      llvm::any_of(region.collectives, [](const PlannedCollective &c) {
        return c.kind == PlannedCollective::Kind::AllGather;
      });
  if (!gathers)
    return "output-parallel, reduced across ranks";
  return "output-parallel, gathered before the return";
}

void mlir::tp::explainPlan(FunctionOpInterface func, const ShardPlan &plan,
                           raw_ostream &os) {
  DenseMap<Value, std::pair<unsigned, DimCut>> cutOf;
  // Values produced with a coarser cut, with the finer one their users
  // slice out (CutPropagation::refine).
  DenseMap<Value, std::pair<unsigned, DimCut>> slicedTo;
  DenseMap<Operation *, unsigned> partialOf;
  // A pair ends in its one narrowing all-reduce. Pairs that share a cut
  // value (one mask read by every layer's attention) form one region.
  int64_t pairs = 0;
  for (auto [index, region] : llvm::enumerate(plan.regions)) {
    for (auto &[value, cut] : region.cuts)
      cutOf[value] = {index + 1, cut};
    for (auto &[value, produced] : region.refinements) {
      slicedTo[value] = cutOf[value];
      cutOf[value] = {index + 1, produced};
    }
    for (const PlannedCollective &c : region.collectives) {
      if (c.kind != PlannedCollective::Kind::AllGather)
        partialOf[c.op] = index + 1;
      pairs += c.purpose == PlannedCollective::Purpose::Pair;
    }
  }

  os << "tp-shard explain: @" << func.getName() << " for " << plan.tpSize
     << " ranks, " << pairs << " column->row pair(s) in " << plan.regions.size()
     << " cut region(s)\n";
  for (auto [index, region] : llvm::enumerate(plan.regions)) {
    os << "  region " << index + 1 << " (" << regionKind(region) << "): seed '"
       << region.seed->getName() << "' at " << region.seed->getLoc() << ", "
       << region.collectives.size() << " collective(s)";
    for (BlockArgument arg : func.getArguments())
      if (auto it = cutOf.find(arg);
          it != cutOf.end() && it->second.first == index + 1) {
        os << "\n    weight arg " << arg.getArgNumber();
        if (auto name = func.getArgAttrOfType<StringAttr>(
                arg.getArgNumber(), TPDialect::getNameAttrName()))
          os << " '" << name.getValue() << "'";
        os << " -> " << arg.getType() << ", ";
        printCut(os, it->second.second, plan.tpSize,
                 cast<RankedTensorType>(arg.getType()));
      }
    os << "\n";
  }

  for (auto &[seed, why] : plan.wholeSeeds)
    os << "  left whole: '" << seed->getName() << "' at " << seed->getLoc()
       << ": " << why << "\n";

  os << "  trace (rank-local types):\n";
  // Collectives by kind, in the dialect's order.
  std::pair<StringRef, int64_t> counts[] = {
      {AllReduceOp::getOperationName(), 0},
      {AllGatherOp::getOperationName(), 0},
      {ReduceScatterOp::getOperationName(), 0}};
  int64_t bytes = 0, tokens = 0;
  func.getFunctionBody().walk([&](Operation *op) {
    if (isa<tensor::EmptyOp, arith::ConstantOp, linalg::FillOp,
            linalg::YieldOp>(op) ||
        op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()) ||
        isa<linalg::LinalgOp>(op->getParentOp()))
      return;
    Value result = op->getResult(0);
    auto type = cast<RankedTensorType>(result.getType());
    os << "    " << llvm::left_justify(op->getName().getStringRef(), 24) << " "
       << llvm::left_justify(
              [&] {
                std::string s;
                llvm::raw_string_ostream ts(s);
                ts << type;
                return s;
              }(),
              28)
       << " ";
    if (isa<TPDialect>(op->getDialect())) {
      for (auto &[name, count] : counts)
        count += op->getName().getStringRef() == name;
      // What each rank receives: the result.
      bytes += tensorBytes(type);
      if (isa<AllReduceOp>(op) && !tokens && type.getRank() > 0)
        tokens = staticElements(type) / type.getDimSize(type.getRank() - 1);
      os << collectiveLabel(op) << " " << staticElements(type) << " elements, "
         << tensorBytes(type) << " bytes\n";
      return;
    }
    auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
    if (auto it = slice ? slicedTo.find(slice.getSource()) : slicedTo.end();
        it != slicedTo.end()) {
      os << "region " << it->second.first << ", ";
      printCut(os, it->second.second, plan.tpSize, type);
      os << ", sliced by rank";
    } else if (auto it = cutOf.find(result); it != cutOf.end()) {
      os << "region " << it->second.first << ", ";
      printCut(os, it->second.second, plan.tpSize, type);
    } else if (auto it = partialOf.find(op); it != partialOf.end()) {
      os << "region " << it->second << ", partial sum (every rank, full shape)";
    } else {
      os << "replicated (redundant on every rank)";
    }
    os << "\n";
  });
  os << "  total: ";
  int64_t collectives = 0;
  for (auto &[name, count] : counts) {
    os << count << " " << dashed(name.split('.').second) << "(s), ";
    collectives += count;
  }
  os << bytes << " bytes per rank per forward pass";
  if (pairs > 0) {
    double perPair = double(collectives) / pairs;
    // A transformer block is two pairs: attention and MLP.
    os << "; " << llvm::format("%.2f", perPair) << " collective(s) per pair, "
       << llvm::format("%.2f", 2 * perPair)
       << " per block (attention + MLP pair)";
  }
  if (tokens)
    os << "; " << bytes / tokens << " bytes per token";
  os << "\n";
}
