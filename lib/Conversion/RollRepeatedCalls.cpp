//===- RollRepeatedCalls.cpp - the layers' calls as a loop ----------------===//
//
// After tp-outline-repeated-blocks and tp-model-interface, an entry calls the
// outlined block once per layer, each call after the loads of its layer's
// buffers from the launcher's array (`buffers[slot]`) and around the
// allocation and release of the activation it passes on. That straight line
// grows with the depth, and LLVM's optimisation and code generation of it
// cost more than linearly in its length (one basic block). Here a run of
// such segments, identical but for the constant index of the buffers they
// load, becomes a loop over a constant table of those indices: the entry is
// the same size at any depth.
//
// The analysis (which ops form the segments of a run, and how each operand
// of a segment relates to the others) is in the first half of the file, the
// rewrite in the second.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPROLLREPEATEDCALLS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Fewer segments than this stay as they are: the loop would not be
/// shorter than the calls.
constexpr unsigned kMinSegments = 3;

/// A value of a segment: the op's position in the segment and the result.
using Position = std::pair<unsigned, unsigned>;

/// How the operand at one place of a segment relates to the segments.
struct Slot {
  enum class Kind {
    /// A value of the same segment, at `from`.
    Internal,
    /// A value of the previous segment, at `from`; the first segment reads
    /// the loop's initial value there.
    Carried,
    /// The same value, defined before the run, in every segment.
    Invariant,
  } kind;
  Position from;
};

/// A run of `count` segments of `length` ops each, the first at `begin` in
/// the block's ops.
struct Run {
  unsigned begin = 0, length = 0, count = 0;
  /// Per op and operand of a segment, its slot.
  SmallVector<SmallVector<Slot>> slots;
  /// The GEPs whose constant index differs between segments (by op
  /// position), their column in the table, and the table (a row per
  /// segment).
  llvm::MapVector<unsigned, unsigned> columns;
  SmallVector<SmallVector<int32_t>> table;
  /// The values carried from one segment to the next or used after the
  /// run, with their value before the first segment (null: none needed).
  llvm::MapVector<Position, Value> carried;
};

/// The ops of one block, the terminator left out, with their positions.
struct Ops {
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> index;

  explicit Ops(Block &block) {
    for (Operation &op : block.without_terminator()) {
      index[&op] = ops.size();
      ops.push_back(&op);
    }
  }

  /// The position of `v` relative to `start` when an op of [start, start +
  /// length) defines it.
  std::optional<Position> positionIn(Value v, unsigned start,
                                     unsigned length) const {
    auto result = dyn_cast<OpResult>(v);
    if (!result)
      return std::nullopt;
    auto it = index.find(result.getOwner());
    if (it == index.end() || it->second < start || it->second >= start + length)
      return std::nullopt;
    return Position{it->second - start, result.getResultNumber()};
  }
};

} // namespace

/// The single constant index of a GEP that reads one element off a base
/// pointer (`buffers[slot]`).
static std::optional<int32_t> singleConstantIndex(Operation *op) {
  auto gep = dyn_cast<LLVM::GEPOp>(op);
  if (!gep || !gep.getDynamicIndices().empty() ||
      gep.getRawConstantIndices().size() != 1)
    return std::nullopt;
  return gep.getRawConstantIndices().front();
}

/// Whether `a` and `b` are the same op but for their operands, or GEPs
/// that differ only in their single constant index.
static bool sameOp(Operation *a, Operation *b, bool &differentIndex) {
  differentIndex = false;
  if (a->getNumRegions() || b->getNumRegions())
    return false;
  auto anyOperands = [](Value, Value) { return success(); };
  if (OperationEquivalence::isEquivalentTo(
          a, b, anyOperands, /*markEquivalent=*/nullptr,
          OperationEquivalence::IgnoreLocations))
    return true;
  std::optional<int32_t> ia = singleConstantIndex(a);
  std::optional<int32_t> ib = singleConstantIndex(b);
  if (!ia || !ib)
    return false;
  auto ga = cast<LLVM::GEPOp>(a), gb = cast<LLVM::GEPOp>(b);
  differentIndex = ga.getElemType() == gb.getElemType() &&
                   ga.getType() == gb.getType() &&
                   ga.getNoWrapFlags() == gb.getNoWrapFlags() &&
                   ga.getBase().getType() == gb.getBase().getType();
  return differentIndex;
}

/// Whether segment `k` of `run` (k >= 1) computes what segment 0 does from
/// its own values, the previous segment's and the run's invariants, the
/// slots of segment 0 (from the comparison with segment 1) and the table's
/// columns being set on the way.
static bool matchSegment(const Ops &ops, Run &run, unsigned k) {
  unsigned first = run.begin, start = run.begin + k * run.length;
  unsigned previous = start - run.length;
  bool setSlots = k == 1;
  SmallVector<int32_t> row;
  for (unsigned i = 0; i < run.length; ++i) {
    Operation *ref = ops.ops[first + i], *op = ops.ops[start + i];
    bool differentIndex;
    if (!sameOp(ref, op, differentIndex))
      return false;
    if (differentIndex || run.columns.contains(i)) {
      if (setSlots && !run.columns.contains(i))
        run.columns.insert({i, run.columns.size()});
      if (!run.columns.contains(i))
        return false;
      row.push_back(*singleConstantIndex(op));
    }
    if (setSlots)
      run.slots.emplace_back();
    for (auto [n, pair] :
         llvm::enumerate(llvm::zip(ref->getOperands(), op->getOperands()))) {
      auto [a, b] = pair;
      std::optional<Position> inRef = ops.positionIn(a, first, run.length);
      std::optional<Position> inOwn = ops.positionIn(b, start, run.length);
      std::optional<Position> inPrevious =
          ops.positionIn(b, previous, run.length);
      Slot slot;
      if (inRef) {
        slot = {Slot::Kind::Internal, *inRef};
        if (inOwn != inRef)
          return false;
      } else if (inPrevious) {
        slot = {Slot::Kind::Carried, *inPrevious};
      } else {
        // Defined before the run (an op of the run would be inRef or an
        // earlier segment's, which no segment may read).
        slot = {Slot::Kind::Invariant, {}};
        if (a != b || ops.positionIn(a, first, start - first))
          return false;
      }
      if (setSlots) {
        run.slots.back().push_back(slot);
        continue;
      }
      const Slot &expected = run.slots[i][n];
      if (expected.kind != slot.kind || expected.from != slot.from)
        return false;
    }
  }
  if (setSlots) {
    // The first row, now that the columns are known.
    SmallVector<int32_t> firstRow;
    for (auto [i, column] : run.columns)
      firstRow.push_back(*singleConstantIndex(ops.ops[first + i]));
    run.table.push_back(std::move(firstRow));
  }
  run.table.push_back(std::move(row));
  return true;
}

/// The initial values of the carried positions, from the first segment's
/// operands; false when two places read one position from different values.
static bool collectCarried(const Ops &ops, Run &run) {
  for (auto [i, slots] : llvm::enumerate(run.slots))
    for (auto [n, slot] : llvm::enumerate(slots)) {
      if (slot.kind != Slot::Kind::Carried)
        continue;
      Value init = ops.ops[run.begin + i]->getOperand(n);
      auto [it, inserted] = run.carried.insert({slot.from, init});
      if (!inserted && it->second != init)
        return false;
    }
  return true;
}

/// Whether the values of the run used after it are the last segment's (the
/// loop hands those on); they join the carried positions.
static bool collectLiveOuts(const Ops &ops, Run &run) {
  unsigned end = run.begin + run.count * run.length;
  unsigned last = end - run.length;
  for (unsigned i = run.begin; i < end; ++i)
    for (OpResult result : ops.ops[i]->getResults())
      for (Operation *user : result.getUsers()) {
        auto it = ops.index.find(user);
        bool inside = it != ops.index.end() && it->second >= run.begin &&
                      it->second < end;
        if (inside)
          continue;
        if (i < last)
          return false;
        run.carried.insert({{i - last, result.getResultNumber()}, Value()});
      }
  return true;
}

/// The longest run of segments ending `phase` ops after each of `calls`
/// (positions in `ops`, evenly spaced), starting at one of its first few.
static std::optional<Run> findRun(const Ops &ops, ArrayRef<unsigned> calls,
                                  unsigned phase) {
  unsigned length = calls[1] - calls[0];
  std::optional<Run> best;
  // The first segments may differ (the first layer reads the input and
  // frees nothing): a few starts are tried.
  for (unsigned s = 0; s < 3 && s + kMinSegments <= calls.size(); ++s) {
    if (calls[s] + phase + 1 < length)
      continue;
    Run run;
    run.begin = calls[s] + phase + 1 - length;
    run.length = length;
    run.count = 1;
    while (s + run.count < calls.size() &&
           calls[s + run.count] + phase < ops.ops.size() &&
           matchSegment(ops, run, run.count))
      ++run.count;
    bool toTheEnd = s + run.count == calls.size();
    // Shorten the run until its live-outs are the last segment's.
    for (; run.count >= kMinSegments; --run.count) {
      Run candidate = run;
      candidate.table.resize(run.count);
      if (collectCarried(ops, candidate) && collectLiveOuts(ops, candidate)) {
        if (!best || candidate.count > best->count)
          best = std::move(candidate);
        break;
      }
    }
    // No later start gives more segments.
    if (best && toTheEnd && best->count + s == calls.size())
      break;
  }
  return best;
}

/// The best run in `block`: for each callee called at evenly spaced places,
/// each phase of the segment boundary.
static std::optional<Run> analyzeBlock(const Ops &ops) {
  llvm::MapVector<StringRef, SmallVector<unsigned>> callsByCallee;
  for (auto [i, op] : llvm::enumerate(ops.ops))
    if (auto call = dyn_cast<LLVM::CallOp>(op))
      if (std::optional<StringRef> callee = call.getCallee())
        callsByCallee[*callee].push_back(i);
  std::optional<Run> best;
  for (auto &[callee, calls] : callsByCallee) {
    // Maximal stretches of equal spacing.
    for (unsigned from = 0; from + kMinSegments <= calls.size();) {
      unsigned to = from + 1;
      unsigned spacing = calls[to] - calls[from];
      while (to + 1 < calls.size() && calls[to + 1] - calls[to] == spacing)
        ++to;
      ArrayRef<unsigned> stretch = ArrayRef(calls).slice(from, to - from + 1);
      if (stretch.size() >= kMinSegments)
        for (unsigned phase = 0; phase < spacing; ++phase) {
          std::optional<Run> run = findRun(ops, stretch, phase);
          if (run && (!best || run->count > best->count))
            best = std::move(run);
          // Every call of the stretch in the run: no phase does better.
          if (best && best->count == stretch.size())
            break;
        }
      from = to;
    }
  }
  return best;
}

//===----------------------------------------------------------------------===//
// Rewrite: the run as a loop over a table of indices.
//===----------------------------------------------------------------------===//

/// The constant table of `run`, a row per segment, as a module global.
static LLVM::GlobalOp createTable(ModuleOp module, SymbolTable &symbols,
                                  StringRef prefix, const Run &run) {
  MLIRContext *ctx = module.getContext();
  auto i32 = IntegerType::get(ctx, 32);
  int64_t rows = run.table.size(), columns = run.columns.size();
  SmallVector<int32_t> flat;
  for (const SmallVector<int32_t> &row : run.table)
    llvm::append_range(flat, row);
  auto type =
      LLVM::LLVMArrayType::get(LLVM::LLVMArrayType::get(i32, columns), rows);
  auto value = DenseElementsAttr::get(
      RankedTensorType::get({rows, columns}, i32), ArrayRef(flat));
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  std::string name;
  for (unsigned i = 0; name.empty() || symbols.lookup(name); ++i)
    name = (prefix + "_slots" + Twine(i)).str();
  auto global = LLVM::GlobalOp::create(b, module.getLoc(), type,
                                       /*isConstant=*/true,
                                       LLVM::Linkage::Internal, name, value);
  symbols.insert(global);
  return global;
}

/// Replaces `run` (in `block`) by a loop: a header with the iteration and
/// the carried values, a body holding the first segment with its carried
/// operands read from the header and its varying indices from the table,
/// then the rest of the block.
static void rollRun(ModuleOp module, SymbolTable &symbols, LLVM::LLVMFuncOp fn,
                    Block *block, const Ops &ops, const Run &run) {
  MLIRContext *ctx = fn.getContext();
  Location loc = ops.ops[run.begin]->getLoc();
  auto i64 = IntegerType::get(ctx, 64);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  unsigned end = run.begin + run.count * run.length;
  ArrayRef<Operation *> segment =
      ArrayRef(ops.ops).slice(run.begin, run.length);
  ArrayRef<Operation *> all =
      ArrayRef(ops.ops).slice(run.begin, end - run.begin);
  LLVM::GlobalOp table = run.columns.empty()
                             ? nullptr
                             : createTable(module, symbols, fn.getName(), run);

  Block *exit = block->splitBlock(ops.ops[end - 1]->getNextNode());
  auto *header = new Block(), *body = new Block();
  fn.getBody().getBlocks().insert(exit->getIterator(), header);
  fn.getBody().getBlocks().insert(exit->getIterator(), body);
  Value iteration = header->addArgument(i64, loc);
  DenseMap<Position, Value> carriedArgs;
  for (auto &[position, init] : run.carried)
    carriedArgs[position] = header->addArgument(
        segment[position.first]->getResult(position.second).getType(), loc);

  // Before the run: enter the loop.
  OpBuilder b = OpBuilder::atBlockEnd(block);
  b.setInsertionPoint(segment.front());
  SmallVector<Value> inits{LLVM::ConstantOp::create(b, loc, i64, 0)};
  for (auto &[position, init] : run.carried)
    inits.push_back(
        init
            ? init
            : LLVM::PoisonOp::create(
                  b, loc,
                  segment[position.first]->getResult(position.second).getType())
                  .getResult());
  b.setInsertionPointToEnd(block);
  // The run's ops are still in `block`, after this branch, until erased.
  LLVM::BrOp::create(b, loc, inits, header);

  b.setInsertionPointToEnd(header);
  Value count = LLVM::ConstantOp::create(b, loc, i64, run.count);
  Value more =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, iteration, count);
  LLVM::CondBrOp::create(b, loc, more, body, ValueRange{}, exit, ValueRange{});

  b.setInsertionPointToEnd(body);
  Value tableAddress =
      table ? LLVM::AddressOfOp::create(b, loc, table).getResult() : Value();
  IRMapping mapping;
  for (auto [i, op] : llvm::enumerate(segment)) {
    Operation *clone;
    if (auto it = run.columns.find(i); it != run.columns.end()) {
      auto gep = cast<LLVM::GEPOp>(op);
      Value entry = LLVM::GEPOp::create(
          b, loc, ptr, table.getType(), tableAddress,
          ArrayRef<LLVM::GEPArg>{0, iteration, int32_t(it->second)});
      Value slot =
          LLVM::LoadOp::create(b, loc, IntegerType::get(ctx, 32), entry);
      clone = LLVM::GEPOp::create(
          b, gep.getLoc(), gep.getType(), gep.getElemType(), gep.getBase(),
          ArrayRef<LLVM::GEPArg>{slot}, gep.getNoWrapFlags());
    } else {
      clone = b.clone(*op);
    }
    for (auto [n, slot] : llvm::enumerate(run.slots[i])) {
      if (slot.kind == Slot::Kind::Invariant)
        continue;
      Value from = slot.kind == Slot::Kind::Internal
                       ? mapping.lookup(segment[slot.from.first]->getResult(
                             slot.from.second))
                       : carriedArgs.lookup(slot.from);
      clone->setOperand(n, from);
    }
    mapping.map(op->getResults(), clone->getResults());
  }
  SmallVector<Value> next{LLVM::AddOp::create(
      b, loc, iteration, LLVM::ConstantOp::create(b, loc, i64, 1))};
  for (auto &[position, init] : run.carried)
    next.push_back(
        mapping.lookup(segment[position.first]->getResult(position.second)));
  LLVM::BrOp::create(b, loc, next, header);

  // After the run: the last segment's values are the header's.
  ArrayRef<Operation *> last = all.take_back(run.length);
  for (auto &[position, init] : run.carried)
    last[position.first]
        ->getResult(position.second)
        .replaceUsesWithIf(carriedArgs.lookup(position), [&](OpOperand &use) {
          return use.getOwner()->getBlock() != block;
        });
  for (Operation *op : llvm::reverse(all))
    op->erase();
}

namespace {
struct TPRollRepeatedCallsPass
    : public tp::impl::TPRollRepeatedCallsBase<TPRollRepeatedCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<LLVM::LLVMFuncOp> functions(module.getOps<LLVM::LLVMFuncOp>());
    for (LLVM::LLVMFuncOp fn : functions) {
      // Each roll splits a block; the blocks after it are searched again.
      for (bool rolled = true; rolled;) {
        rolled = false;
        for (Block &block : fn.getBody()) {
          Ops ops(block);
          if (std::optional<Run> run = analyzeBlock(ops)) {
            rollRun(module, symbols, fn, &block, ops, *run);
            rolled = true;
            break;
          }
        }
      }
    }
  }
};
} // namespace
