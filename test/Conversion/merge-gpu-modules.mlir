// RUN: tp-opt %s --tp-merge-gpu-modules | FileCheck %s

// Two outlined kernels, both named @k in their own modules (the second one's
// name is that of the first module's kernel): one module, every kernel named
// after the module it came from, the launches pointed there.
// CHECK: gpu.module @k {
// CHECK-NEXT: gpu.func @k(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @b(%{{.*}}: memref<8xf32>) kernel
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @f(
// CHECK: gpu.launch_func @k::@k {{.*}} args(%{{.*}} : memref<4xf32>)
// CHECK: gpu.launch_func @k::@b {{.*}} args(%{{.*}} : memref<8xf32>)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @k(%y: memref<8xf32>) kernel {
      gpu.return
    }
  }
  func.func @f(%x: memref<4xf32>, %y: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<8xf32>)
    return
  }
}
