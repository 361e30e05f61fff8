//===- tp-shard-fuzzer.cpp - libFuzzer target for tp-shard ----------------===//
//
// Feeds each input to what tp-compile runs before LLVM: the MLIR parser and
// verifier, tp-import, tp-shard, then the CPU lowering pipeline on what
// shards. Built only with -DTP_ENABLE_FUZZER=ON (scripts/asan.sh); run by
// scripts/fuzz.sh.
//
// The input is MLIR text. Its options come from the text itself, so that
// the seed corpus (test/**/*.mlir) brings those of its RUN lines and a
// mutation can change them:
//   - the first `tp-size=N` anywhere (N in 1..64), else 2;
//   - `allow-fallback=true` anywhere turns the fallback collectives on;
//   - `tp-import` anywhere runs tp-import before tp-shard (its TOSA
//     conversions left out: they are upstream's, and a TOSA op left is
//     refused by tp-shard), as tp-compile does; without it the input goes
//     to tp-shard as it is, constants and all, as `tp-opt --tp-shard` takes
//     it.
// Not a module attribute: `tp.size` on a module is what tp-shard writes, so
// an input carrying it would be sharded input, which is not what this
// exercises.
//
// What counts as a finding, beyond the sanitizers' reports: tp-import or
// tp-shard succeeding on verified input but leaving IR that does not verify. A
// diagnostic on bad input is the expected outcome and is dropped. Inputs
// that would hit a known crash in MLIR's own parser or verifier are skipped
// (hitsLinalgArrayParserCrash, hitsVerifierCrash).
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Import/Passes.h"
#include "tp/InitAll.h"
#include "tp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;

/// The first `tp-size=N` in the text; 2 (tp-shard's default) without one.
static int64_t readTpSize(llvm::StringRef text) {
  size_t at = text.find("tp-size=");
  if (at == llvm::StringRef::npos)
    return 2;
  llvm::StringRef digits =
      text.drop_front(at + sizeof("tp-size=") - 1).take_while([](char c) {
        return c >= '0' && c <= '9';
      });
  int64_t size;
  // The size only divides shapes; a large one finds nothing a small one
  // does not, and 0 or a negative one is refused before any analysis.
  if (digits.getAsInteger(10, size) || size < 1 || size > 64)
    return 2;
  return size;
}

/// Whether the text has `permutation =` or `dimensions =` followed by anything
/// but a bracketed list of 64-bit integers. MLIR 22's parsers of
/// linalg.transpose, linalg.broadcast and linalg.reduce then put a null
/// attribute into the operation and crash (an upstream bug, with its reproducer
/// in docs/testing.md): every run would stop there within seconds, before
/// reaching tp-shard. Also true for such text in a comment or elsewhere,
/// which only skips a few more inputs.
static bool hitsLinalgArrayParserCrash(llvm::StringRef text) {
  for (llvm::StringRef key : {"permutation", "dimensions"}) {
    for (size_t at = text.find(key); at != llvm::StringRef::npos;
         at = text.find(key, at + 1)) {
      llvm::StringRef rest = text.drop_front(at + key.size()).ltrim();
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim();
      if (!rest.consume_front("["))
        return true;
      // Integers of at most 18 digits, each maybe negative, comma-separated.
      rest = rest.ltrim();
      if (rest.consume_front("]"))
        continue;
      while (true) {
        rest.consume_front("-");
        size_t digits = rest.size() - rest.ltrim("0123456789").size();
        if (digits == 0 || digits > 18)
          return true;
        rest = rest.drop_front(digits).ltrim();
        if (rest.consume_front("]"))
          break;
        if (!rest.consume_front(","))
          return true;
        rest = rest.ltrim();
      }
    }
  }
  return false;
}

/// Whether the module holds an op whose MLIR 22 verifier crashes (upstream
/// bugs, with their reproducers in docs/testing.md): a linalg.matmul with an
/// input indexing map without results (MatmulOp::verify reads the map's first
/// result while checking for a broadcast), or a tensor.concat along a
/// negative dimension (ConcatOp::verify indexes the shapes by it). Reads only
/// attributes, so it is safe on IR that has been parsed but not verified.
static bool hitsVerifierCrash(ModuleOp module) {
  WalkResult walk = module.walk([](Operation *op) {
    if (isa<linalg::MatmulOp>(op)) {
      auto maps = op->getAttrOfType<ArrayAttr>("indexing_maps");
      for (Attribute map :
           maps ? maps.getValue().take_front(2) : ArrayRef<Attribute>()) {
        auto affine = dyn_cast<AffineMapAttr>(map);
        if (affine && affine.getValue().getNumResults() == 0)
          return WalkResult::interrupt();
      }
    }
    if (isa<tensor::ConcatOp>(op)) {
      auto dim = op->getAttrOfType<IntegerAttr>("dim");
      if (dim && dim.getValue().isNegative())
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

// LLVM's headers poison BumpPtrAllocator slabs in an ASan build; Debian's
// LLVM and MLIR libraries, built without ASan, allocate from them without
// unpoisoning, so the first attribute MLIR interns would be reported as a
// use-after-poison. Ignoring manual poisoning keeps every real check (heap,
// stack, globals); test/lit.cfg.py sets the same for the tools.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (hitsLinalgArrayParserCrash(text))
    return -1; // Not added to the corpus.

  // A fresh context per input: nothing one input interns or loads can change
  // how the next one behaves, so every crash reproduces from its own file.
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry;
    tp::registerLoweringDialects(*r);
    return r;
  }();
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  // Kept, not printed: shown only when an input breaks the contract below.
  std::string diagnostics;
  ScopedDiagnosticHandler drop(&context, [&](Diagnostic &diag) {
    if (diagnostics.size() < 4096)
      diagnostics += diag.str() + "\n";
    return success();
  });

  // MLIR's lexer reads the byte after the text and takes a NUL there for the
  // end (the MemoryBuffer contract); libFuzzer's data has none, and what
  // follows it would lengthen the last token. parseSourceString does not
  // copy, so give the parser a NUL-terminated copy, as a file would be.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz-input"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
      sourceMgr, ParserConfig(&context, /*verifyAfterParse=*/false));
  if (!module)
    return 0;
  if (hitsVerifierCrash(*module))
    return -1;
  // From here on the module is valid IR.
  if (failed(verify(*module)))
    return 0;

  if (text.contains("tp-import")) {
    tp::ImportOptions importOptions;
    importOptions.tosa = false;
    PassManager import(&context);
    import.enableVerifier(false);
    tp::buildImportPipeline(import, importOptions);
    if (failed(import.run(*module)))
      return 0;
    if (failed(verify(*module))) {
      llvm::errs() << "tp-import succeeded but its output does not verify:\n"
                   << diagnostics;
      std::abort();
    }
  }

  tp::TPShardOptions options;
  options.tpSize = readTpSize(text);
  options.allowFallback = text.contains("allow-fallback=true");
  PassManager shard(&context);
  // Verified below, so that a module tp-shard broke is told apart from one
  // it refused.
  shard.enableVerifier(false);
  shard.addPass(tp::createTPShard(options));
  if (failed(shard.run(*module)))
    return 0;
  if (failed(verify(*module))) {
    llvm::errs() << "tp-shard succeeded (tp-size=" << options.tpSize
                 << ") but its output does not verify:\n"
                 << diagnostics;
    std::abort();
  }

  // What tp-compile does before the lowering: the argument attributes go to
  // the manifest, and the entry point gets a C interface.
  for (auto fn : module->getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    fn.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
    fn->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  }
  PassManager lower(&context);
  tp::buildCpuLoweringPipeline(lower);
  // A failure here is a refusal (an op the lowering does not handle); the
  // sanitizers report anything worse.
  (void)lower.run(*module);
  return 0;
}
