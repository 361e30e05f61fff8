//===- RowKernels.cpp - a reduction and its neighbours, a block per row ---===//
//
// A normalisation or a softmax is a few pointwise ops and one or two
// reductions along the same rows: RMSNorm is the residual add, the sum of
// squares, the scaling and (bf16 GEMMs) the rounding; softmax is the scale
// and mask, the maximum, the exponentials, their sum and the division. As
// loops, each is a kernel launch, and a reduction is either one thread per
// row or stages of partial reductions (tp-split-reductions): a bf16 decode
// step on the H200 spent about 0.27 of its 0.60 ms outside the large GEMMs,
// in ~60 such kernels of a few microseconds each. Here a run of such ops
// over the same rows becomes
// one kernel: a block per row, its threads striding along the row in each
// op in turn, each reduction combined across the block
// (tp-row-kernels-to-gpu: gpu.all_reduce) so that the ops after it read the
// result. An argmax/argmin combines twice: the best value, then the
// smallest index holding it (the first occurrence, as the loop takes).
//
// The ops are linalg ops on buffers, between which only allocations,
// deallocations and ops without memory effects stand. An op whose loops,
// less those of one iteration, are the rows then the row's elements is
// pointwise (all parallel) or a reduction (the last loop reduces, with one
// combiner gpu.all_reduce knows, or an argmax); one whose loops are the
// rows alone (the fill of a reduction's init) runs on one thread per row.
// Each op's threads touch other elements of the row than those that wrote
// them, so
// blocks must not share elements: every buffer that one op of the run
// writes must be touched by all of them at the same element offset, as a
// function of the row and the element, an offset that changes with every
// row index; buffers that may alias one written are refused (views of one
// buffer compare by offset). Strided layouts are taken as not overlapping
// themselves.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPROWKERNELS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;
using gpu::AllReduceOperation;

std::optional<AllReduceOperation> mlir::tp::blockReductionOf(Operation *op) {
  using R = std::optional<AllReduceOperation>;
  return TypeSwitch<Operation *, R>(op)
      .Case<arith::AddFOp, arith::AddIOp>(
          [](auto) { return R(AllReduceOperation::ADD); })
      .Case<arith::MulFOp, arith::MulIOp>(
          [](auto) { return R(AllReduceOperation::MUL); })
      .Case([](arith::MaxNumFOp) { return R(AllReduceOperation::MAXNUMF); })
      .Case([](arith::MinNumFOp) { return R(AllReduceOperation::MINNUMF); })
      .Case([](arith::MaximumFOp) { return R(AllReduceOperation::MAXIMUMF); })
      .Case([](arith::MinimumFOp) { return R(AllReduceOperation::MINIMUMF); })
      .Case([](arith::MaxSIOp) { return R(AllReduceOperation::MAXSI); })
      .Case([](arith::MinSIOp) { return R(AllReduceOperation::MINSI); })
      .Case([](arith::MaxUIOp) { return R(AllReduceOperation::MAXUI); })
      .Case([](arith::MinUIOp) { return R(AllReduceOperation::MINUI); })
      .Case([](arith::AndIOp) { return R(AllReduceOperation::AND); })
      .Case([](arith::OrIOp) { return R(AllReduceOperation::OR); })
      .Case([](arith::XOrIOp) { return R(AllReduceOperation::XOR); })
      .Default([](Operation *) { return R(); });
}

bool mlir::tp::isRowKernel(Operation *op) {
  return isa<scf::ParallelOp>(op) && op->hasAttr(kRowKernelAttrName);
}

namespace {

/// What a loop of an op is in the kernel: of one iteration, row index k,
/// or the element along the row.
constexpr int kUnit = -1;

/// A linalg op as a stage of a row kernel.
struct Stage {
  linalg::LinalgOp op;
  /// Per loop: kUnit, a row index, or `rows` (the element).
  SmallVector<int> roles;
  /// The sizes of the loops that are neither of one iteration nor the
  /// reduction, in order.
  SmallVector<int64_t> wide;
  /// A reduction's combiner, and the length it reduces.
  Operation *combiner = nullptr;
  int64_t length = 0;
  /// An argmax/argmin (tp::argExtremum): where an element is better than
  /// the accumulator, its index is taken.
  std::optional<arith::CmpFPredicate> better;
  /// Pointwise over the rows alone (one thread per row).
  bool rowWise = false;
};

/// `op` as a stage, if it is one the kernels can run: static loops,
/// projected-permutation maps, a body without memory effects whose
/// linalg.index ops are its own, at most one reduction and then the last
/// loop, the last dimension of each input that it indexes, either over one
/// init by one combiner with a neutral element that gpu.all_reduce knows,
/// or an argmax/argmin with an integer index.
std::optional<Stage> asStage(linalg::LinalgOp op) {
  if (!op || !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) {
        return m.isProjectedPermutation();
      }))
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return std::nullopt;
  bool plain = true;
  op.getBlock()->walk([&](Operation *inner) {
    if (!isMemoryEffectFree(inner) ||
        (isa<linalg::IndexOp>(inner) && inner->getBlock() != op.getBlock()))
      plain = false;
  });
  if (!plain)
    return std::nullopt;
  Stage s;
  s.op = op;
  unsigned reductions = op.getNumReductionLoops();
  if (reductions > 1)
    return std::nullopt;
  if (reductions == 1) {
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    if (dims.front() + 1 != sizes.size() || sizes.back() < 2)
      return std::nullopt;
    // The block's threads read neighbours: the reduced loop must be the
    // last dimension of what it reads (a split reduction's partials read
    // across rows).
    AffineExpr reduced = getAffineDimExpr(dims.front(), op.getContext());
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      if (map.getResultPosition(reduced) &&
          *map.getResultPosition(reduced) + 1 != map.getNumResults())
        return std::nullopt;
    }
    SmallVector<Operation *> combiners;
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (op.getNumDpsInits() == 1) {
      if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
          combiners.size() != 1 || combiners.front()->getNumOperands() != 2 ||
          !tp::blockReductionOf(combiners.front()))
        return std::nullopt;
      s.combiner = combiners.front();
    } else if (auto extremum =
                   generic && op.getNumDpsInits() == 2 &&
                           op.getIndexingMapsArray()[op.getNumDpsInputs()] ==
                               op.getIndexingMapsArray()[op.getNumDpsInputs() +
                                                         1]
                       ? tp::argExtremum(generic, dims.front())
                       : std::nullopt) {
      std::tie(s.combiner, s.better) = *extremum;
      if (!isa<IntegerType>(generic.getRegionOutputArgs()[1].getType()))
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    if (!arith::getNeutralElement(s.combiner))
      return std::nullopt;
    s.length = sizes.back();
    sizes.pop_back();
  }
  for (int64_t size : sizes)
    if (size != 1)
      s.wide.push_back(size);
  return s;
}

/// A linear function of the kernel's row indices and element position.
struct Offset {
  SmallVector<int64_t> coefficients;
  int64_t constant = 0;
  bool operator==(const Offset &o) const {
    return constant == o.constant && coefficients == o.coefficients;
  }
};

/// One stage's access to a buffer.
struct Access {
  Value base;
  /// Unknown where the view's layout is not static.
  std::optional<Offset> offset;
  bool write;
};

/// The group being formed: the rows, the elements per row, the stages.
struct Group {
  SmallVector<int64_t> rows;
  int64_t length = 0;
  SmallVector<Stage> stages;
  SmallVector<Access> accesses;
};

/// Whether `v` views its buffer through a memref.view, whose byte shift is
/// not in its type's offset.
bool viewsByteShifted(Value v) {
  for (auto view = v.getDefiningOp<ViewLikeOpInterface>(); view;
       view = view.getViewSource().getDefiningOp<ViewLikeOpInterface>())
    if (isa<memref::ViewOp>(view))
      return true;
  return false;
}

/// Assigns `s`'s loops their roles in a kernel over `rows` of `length`
/// elements: false when its loops are neither the rows then the elements
/// nor (`s` pointwise) the rows alone.
bool assignRoles(Stage &s, ArrayRef<int64_t> rows, int64_t length) {
  bool &rowWise = s.rowWise;
  rowWise = false;
  if (s.combiner) {
    if (s.length != length || ArrayRef<int64_t>(s.wide) != rows)
      return false;
  } else if (ArrayRef<int64_t>(s.wide) == rows) {
    rowWise = true;
  } else if (s.wide.size() != rows.size() + 1 || s.wide.back() != length ||
             ArrayRef<int64_t>(s.wide).drop_back() != rows) {
    return false;
  }
  SmallVector<int64_t> sizes = s.op.getStaticLoopRanges();
  s.roles.clear();
  int next = 0;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    bool element = s.combiner ? d + 1 == sizes.size()
                              : !rowWise && size != 1 &&
                                    next == static_cast<int>(rows.size());
    if (element)
      s.roles.push_back(rows.size());
    else if (size == 1)
      s.roles.push_back(kUnit);
    else
      s.roles.push_back(next++);
  }
  return true;
}

/// `s`'s accesses to buffers.
void collectAccesses(const Stage &s, unsigned numRows,
                     SmallVectorImpl<Access> &accesses) {
  linalg::LinalgOp op = s.op;
  for (OpOperand &operand : s.op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    Access a{tp::viewedBuffer(operand.get()), std::nullopt,
             op.isDpsInit(&operand)};
    SmallVector<int64_t> strides;
    int64_t start;
    if (!viewsByteShifted(operand.get()) &&
        succeeded(type.getStridesAndOffset(strides, start)) &&
        !ShapedType::isDynamic(start) &&
        llvm::none_of(strides, ShapedType::isDynamic)) {
      Offset o;
      o.coefficients.assign(numRows + 1, 0);
      o.constant = start;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [i, result] : llvm::enumerate(map.getResults())) {
        int role = s.roles[cast<AffineDimExpr>(result).getPosition()];
        if (role != kUnit)
          o.coefficients[role] += strides[i];
      }
      a.offset = o;
    }
    accesses.push_back(a);
  }
}

/// Whether a write of `s` lands where no other thread of the kernel writes:
/// its offset changes with every row index and, in a loop along the row,
/// with the element. (Linalg's parallel loops may write one element from
/// many points; the loops' last point wins, the GPU's any.)
bool ownsElements(const Access &write, const Stage &s, unsigned numRows) {
  if (!write.offset)
    return false;
  ArrayRef<int64_t> c = write.offset->coefficients;
  bool alongRow = !s.combiner && !s.rowWise;
  return llvm::all_of(c.take_front(numRows),
                      [](int64_t x) { return x != 0; }) &&
         (!alongRow || c[numRows] != 0);
}

/// Whether two accesses of different stages can run in one kernel (each
/// write owning its elements): at the same elements, or in buffers that
/// cannot alias where one is written.
bool compatible(const Access &x, const Access &y, AliasAnalysis &aliases) {
  if (!x.write && !y.write)
    return true;
  if (x.base != y.base)
    return aliases.alias(x.base, y.base).isNo();
  return x.offset && y.offset && *x.offset == *y.offset;
}

/// Adds `s` to `g` if it fits and conflicts with no stage there.
bool tryAdd(Group &g, Stage s, AliasAnalysis &aliases) {
  if (!assignRoles(s, g.rows, g.length))
    return false;
  SmallVector<Access> mine;
  collectAccesses(s, g.rows.size(), mine);
  for (const Access &x : mine) {
    if (x.write && !ownsElements(x, s, g.rows.size()))
      return false;
    for (const Access &y : g.accesses)
      if (!compatible(x, y, aliases))
        return false;
  }
  g.accesses.append(mine);
  g.stages.push_back(std::move(s));
  return true;
}

/// The indices at which `operand` of `s` is read or written at `ivs`.
SmallVector<Value> indicesOf(const Stage &s, OpOperand &operand,
                             ArrayRef<Value> ivs) {
  linalg::LinalgOp op = s.op;
  return llvm::map_to_vector(
      op.getMatchingIndexingMap(&operand).getResults(),
      [&](AffineExpr e) { return ivs[cast<AffineDimExpr>(e).getPosition()]; });
}

/// Loads `s`'s operands at the point `ivs` (one per loop), runs its body
/// there with `accs` as the inits' values (a reduction's accumulators) and
/// returns what it yields.
SmallVector<Value> emitPoint(OpBuilder &b, Location loc, const Stage &s,
                             ArrayRef<Value> ivs, ValueRange accs = {}) {
  linalg::LinalgOp op = s.op;
  IRMapping mapping;
  Block *body = op.getBlock();
  for (OpOperand &operand : s.op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    Value value = operand.get();
    if (!accs.empty() && op.isDpsInit(&operand)) {
      value = accs[operand.getOperandNumber() - op.getNumDpsInputs()];
    } else if (isa<MemRefType>(value.getType())) {
      if (op.isDpsInit(&operand) && !op.payloadUsesValueFromOperand(&operand))
        continue;
      value = memref::LoadOp::create(b, loc, value, indicesOf(s, operand, ivs));
    }
    mapping.map(arg, value);
  }
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  return llvm::map_to_vector(
      body->getTerminator()->getOperands(),
      [&](Value v) { return mapping.lookupOrDefault(v); });
}

/// Builds the loops of a row kernel's body, in the row loop.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  Value c0, c1, threads, length;

  /// A loop over the block's threads (or over one thread).
  void threadLoop(function_ref<void(Value)> body, bool one = false) {
    scf::ParallelOp::create(
        b, loc, ValueRange{c0}, ValueRange{one ? c1 : threads}, ValueRange{c1},
        [&](OpBuilder &, Location, ValueRange t) { body(t[0]); });
  }

  /// A loop over the block's threads whose values `value(t)` are combined
  /// by `combine` (on scf.reduce's arguments) into its result.
  Value reduceThreads(Value neutral, function_ref<Value(Value)> value,
                      function_ref<Value(Value, Value)> combine) {
    auto loop = scf::ParallelOp::create(
        b, loc, ValueRange{c0}, ValueRange{threads}, ValueRange{c1},
        ValueRange{neutral},
        [&](OpBuilder &, Location, ValueRange t, ValueRange) {
          auto reduce = scf::ReduceOp::create(b, loc, value(t[0]));
          Block &combiner = reduce.getReductions()[0].front();
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&combiner);
          scf::ReduceReturnOp::create(
              b, loc,
              combine(combiner.getArgument(0), combiner.getArgument(1)));
        });
    return loop.getResult(0);
  }

  /// The thread's fold of `s`'s body over its elements of the row (from
  /// `starts`); `pointOf` gives the loops' values at an element.
  ValueRange foldElements(const Stage &s, ValueRange starts,
                          function_ref<SmallVector<Value>(Value)> pointOf,
                          Value t) {
    return scf::ForOp::create(
               b, loc, t, length, threads, starts,
               [&](OpBuilder &, Location, Value j, ValueRange acc) {
                 scf::YieldOp::create(b, loc,
                                      emitPoint(b, loc, s, pointOf(j), acc));
               })
        .getResults();
  }

  Value combine(Operation *combiner, Value x, Value y) {
    Operation *c = b.clone(*combiner);
    c->setOperands({x, y});
    return c->getResult(0);
  }
};

/// `g` as one scf.parallel over its rows (marked kRowKernelAttrName) of
/// thread loops, in place of its last op.
void emit(const Group &g, int64_t maxThreads) {
  Operation *last = g.stages.back().op;
  OpBuilder b(last);
  Location loc = b.getFusedLoc(llvm::map_to_vector(
      g.stages, [](const Stage &s) { return s.op->getLoc(); }));
  int64_t numRows = 1;
  for (int64_t r : g.rows)
    numRows *= r;
  int64_t threads = std::min<int64_t>(maxThreads, llvm::alignTo(g.length, 32));
  KernelBuilder k{b,
                  loc,
                  arith::ConstantIndexOp::create(b, loc, 0),
                  arith::ConstantIndexOp::create(b, loc, 1),
                  arith::ConstantIndexOp::create(b, loc, threads),
                  arith::ConstantIndexOp::create(b, loc, g.length)};
  Value cRows = arith::ConstantIndexOp::create(b, loc, numRows);
  // An argmax/argmin leaves each thread's best value and index in memory
  // for the block's two reductions (scf.reduce combines one value).
  DenseMap<Operation *, std::pair<Value, Value>> scratch;
  for (const Stage &s : g.stages) {
    if (!s.better)
      continue;
    auto scratchOf = [&](Value acc) {
      return memref::AllocOp::create(
          b, loc, MemRefType::get({numRows, threads}, acc.getType()));
    };
    linalg::LinalgOp op = s.op;
    scratch[op] = {scratchOf(op.getRegionOutputArgs()[0]),
                   scratchOf(op.getRegionOutputArgs()[1])};
  }
  auto kernel = scf::ParallelOp::create(
      b, loc, ValueRange{k.c0}, ValueRange{cRows}, ValueRange{k.c1},
      [&](OpBuilder &, Location, ValueRange rowIvs) {
        Value rowIv = rowIvs[0];
        SmallVector<Value> row;
        if (g.rows.size() == 1)
          row.push_back(rowIv);
        else if (g.rows.size() > 1)
          llvm::append_range(row, affine::AffineDelinearizeIndexOp::create(
                                      b, loc, rowIv, ArrayRef<int64_t>(g.rows))
                                      .getResults());
        for (const Stage &s : g.stages) {
          auto pointOf = [&](Value element) {
            return llvm::map_to_vector(s.roles, [&](int role) -> Value {
              if (role == kUnit)
                return k.c0;
              return role == static_cast<int>(g.rows.size()) ? element
                                                             : row[role];
            });
          };
          linalg::LinalgOp op = s.op;
          if (!s.combiner) {
            k.threadLoop(
                [&](Value t) {
                  auto point = [&](Value element) {
                    SmallVector<Value> ivs = pointOf(element);
                    SmallVector<Value> values = emitPoint(b, loc, s, ivs);
                    for (auto [init, value] :
                         llvm::zip(op.getDpsInitsMutable(), values))
                      memref::StoreOp::create(b, loc, value, init.get(),
                                              indicesOf(s, init, ivs));
                  };
                  if (s.rowWise)
                    return point(k.c0);
                  scf::ForOp::create(
                      b, loc, t, k.length, k.threads, ValueRange{},
                      [&](OpBuilder &, Location, Value j, ValueRange) {
                        point(j);
                        scf::YieldOp::create(b, loc);
                      });
                },
                /*one=*/s.rowWise);
            continue;
          }
          // Each thread folds its elements from the neutral element, the
          // block combines the threads', and one thread folds that into
          // the inits as the op would.
          Value neutral = arith::ConstantOp::create(
              b, loc, *arith::getNeutralElement(s.combiner));
          auto combine = [&](Value x, Value y) {
            return k.combine(s.combiner, x, y);
          };
          SmallVector<Value> ivs = pointOf(k.c0);
          auto store = [&](ValueRange values) {
            k.threadLoop(
                [&](Value) {
                  SmallVector<Value> olds;
                  for (OpOperand &init : op.getDpsInitsMutable())
                    olds.push_back(memref::LoadOp::create(
                        b, loc, init.get(), indicesOf(s, init, ivs)));
                  SmallVector<Value> news =
                      tp::mergeReduction(b, loc, s.combiner, s.better, values,
                                         olds, /*breakTies=*/false);
                  for (auto [init, value] :
                       llvm::zip(op.getDpsInitsMutable(), news))
                    memref::StoreOp::create(b, loc, value, init.get(),
                                            indicesOf(s, init, ivs));
                },
                /*one=*/true);
          };
          if (!s.better) {
            store(k.reduceThreads(
                neutral,
                [&](Value t) {
                  return k.foldElements(s, neutral, pointOf, t)[0];
                },
                combine));
            continue;
          }
          // An argmax/argmin: the best value, then the smallest index
          // holding it (the first occurrence: each thread's index is that
          // of its first best element). Where the best is NaN no index
          // holds it and the init's stays, as tp-split-reductions' merges
          // do; the loop would keep the index of the best before the NaN.
          Value values = scratch.lookup(op).first;
          Value indices = scratch.lookup(op).second;
          Type indexType = op.getRegionOutputArgs()[1].getType();
          Value none = arith::ConstantOp::create(
              b, loc,
              b.getIntegerAttr(
                  indexType,
                  APInt::getSignedMaxValue(indexType.getIntOrFloatBitWidth())));
          k.threadLoop([&](Value t) {
            ValueRange best =
                k.foldElements(s, ValueRange{neutral, none}, pointOf, t);
            memref::StoreOp::create(b, loc, best[0], values,
                                    ValueRange{rowIv, t});
            memref::StoreOp::create(b, loc, best[1], indices,
                                    ValueRange{rowIv, t});
          });
          Value best = k.reduceThreads(
              neutral,
              [&](Value t) {
                return memref::LoadOp::create(b, loc, values,
                                              ValueRange{rowIv, t});
              },
              combine);
          Value first = k.reduceThreads(
              none,
              [&](Value t) {
                Value v = memref::LoadOp::create(b, loc, values,
                                                 ValueRange{rowIv, t});
                Value i = memref::LoadOp::create(b, loc, indices,
                                                 ValueRange{rowIv, t});
                Value holds = arith::CmpFOp::create(
                    b, loc, arith::CmpFPredicate::OEQ, v, best);
                return arith::SelectOp::create(b, loc, holds, i, none)
                    .getResult();
              },
              [&](Value x, Value y) {
                return arith::MinSIOp::create(b, loc, x, y).getResult();
              });
          store({best, first});
        }
      });
  kernel->setAttr(tp::kRowKernelAttrName, b.getUnitAttr());
  b.setInsertionPointAfter(kernel);
  for (auto &[op, buffers] : scratch) {
    memref::DeallocOp::create(b, loc, buffers.first);
    memref::DeallocOp::create(b, loc, buffers.second);
  }
  // The deallocations between the ops free buffers the kernel may use.
  Operation *first = g.stages.front().op;
  SmallVector<Operation *> deallocs;
  for (Operation *op = first; op != last; op = op->getNextNode())
    if (isa<memref::DeallocOp>(op))
      deallocs.push_back(op);
  for (Operation *dealloc : llvm::reverse(deallocs))
    dealloc->moveAfter(last);
  for (const Stage &s : g.stages)
    s.op->erase();
}

struct TPRowKernelsPass : tp::impl::TPRowKernelsBase<TPRowKernelsPass> {
  using TPRowKernelsBase::TPRowKernelsBase;

  /// Forms groups in one run of stages (nothing but
  /// tp::movesAsideOfKernels ops between them; a deallocation moves after
  /// the kernel) around each reduction: the stages just before it that
  /// fit, then those after. Whether stages fit together is decided pair by
  /// pair, so the stages found going back fit in program order too.
  void groupRun(ArrayRef<Stage> run, AliasAnalysis &aliases,
                SmallVector<Group, 0> &groups) {
    size_t next = 0;
    while (next < run.size()) {
      size_t r = next;
      while (r < run.size() && !run[r].combiner)
        ++r;
      if (r == run.size())
        return;
      auto seed = [&] {
        Group g;
        g.rows = run[r].wide;
        g.length = run[r].length;
        return g;
      };
      // The longest run of stages before the reduction that fits with it.
      Group back = seed();
      (void)tryAdd(back, run[r], aliases);
      size_t start = r;
      while (start > next && tryAdd(back, run[start - 1], aliases))
        --start;
      Group g = seed();
      for (size_t i = start; i <= r; ++i)
        (void)tryAdd(g, run[i], aliases);
      size_t end = r + 1;
      while (end < run.size() && tryAdd(g, run[end], aliases))
        ++end;
      groups.push_back(std::move(g));
      next = end;
    }
  }

  void runOnOperation() override {
    if (maxThreads < 32 || maxThreads > 1024) {
      getOperation().emitError("tp-row-kernels: max-threads must be from 32 "
                               "to 1024 (a CUDA block), not ")
          << static_cast<int64_t>(maxThreads);
      return signalPassFailure();
    }
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    SmallVector<Group, 0> groups;
    // Host code: blocks outside any loop nest the kernels are made of.
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp, linalg::LinalgOp>(op))
        return WalkResult::skip();
      for (Region &region : op->getRegions())
        for (Block &block : region) {
          SmallVector<Stage> run;
          for (Operation &inner : block) {
            if (std::optional<Stage> s =
                    asStage(dyn_cast<linalg::LinalgOp>(&inner));
                s && cast<linalg::LinalgOp>(&inner).hasPureBufferSemantics()) {
              run.push_back(std::move(*s));
              continue;
            }
            if (tp::movesAsideOfKernels(&inner))
              continue;
            groupRun(run, aliases, groups);
            run.clear();
          }
          groupRun(run, aliases, groups);
        }
      return WalkResult::advance();
    });
    for (const Group &g : groups)
      emit(g, maxThreads);
  }
};

} // namespace

bool mlir::tp::takesRowKernel(linalg::LinalgOp op) {
  std::optional<Stage> s = asStage(op);
  return s && s->combiner;
}
