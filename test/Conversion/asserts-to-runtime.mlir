// RUN: tp-opt %s --tp-asserts-to-runtime | FileCheck %s

// A failed check calls tprt_abort with its message, which ends every rank;
// two checks with one message share its global.

// CHECK-DAG: llvm.mlir.global internal constant @[[OTHER:tp_assert_message_[0-9]+]]("another\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[OUTSIDE:tp_assert_message_[0-9]+]]("an index is outside\00")
// CHECK-DAG: func.func private @tprt_abort(!llvm.ptr)
// CHECK-LABEL: func.func @checks
// CHECK-SAME:    (%[[OK:.*]]: i1, %[[ALSO:.*]]: i1, %[[OTHER_OK:.*]]: i1)
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[FAILED:.*]] = arith.xori %[[OK]], %[[TRUE]] : i1
// CHECK-NEXT:    scf.if %[[FAILED]] {
// CHECK-NEXT:      %[[MESSAGE:.*]] = llvm.mlir.addressof @[[OUTSIDE]] : !llvm.ptr
// CHECK-NEXT:      func.call @tprt_abort(%[[MESSAGE]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    }
// CHECK:         arith.xori %[[ALSO]]
// CHECK:         llvm.mlir.addressof @[[OUTSIDE]]
// CHECK:         arith.xori %[[OTHER_OK]]
// CHECK:         llvm.mlir.addressof @[[OTHER]]
// CHECK-NOT:     cf.assert
func.func @checks(%ok: i1, %also: i1, %other: i1) {
  cf.assert %ok, "an index is outside"
  cf.assert %also, "an index is outside"
  cf.assert %other, "another"
  return
}
