// Thin PTX wrappers for sm_90a: mbarriers, bulk / tensor copies (TMA), proxy fences, named
// barriers, register reallocation, programmatic dependent launch, wgmma fences and descriptors.
#pragma once

#include <cuda.h>
#include <cstdint>

namespace encore::gemm::sm90 {

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier (addresses in the shared window: computed once from the kernel's base, no cvta
// per use) ----
__device__ __forceinline__ void MbarInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void MbarArrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(bar)
               : "memory");
}
__device__ __forceinline__ void MbarArriveExpectTx(uint32_t bar, uint32_t bytes) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" ::"r"(
                   bar),
               "r"(bytes)
               : "memory");
}
// Blocks until the phase with the given parity has completed.
__device__ __forceinline__ void MbarWait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// ---- shared-memory loads by shared-window address ----
__device__ __forceinline__ uint4 LdShared128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ uint32_t LdSharedU16(uint32_t addr) {
  uint16_t v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr) : "memory");
  return v;
}

// Four 8x8 b16 matrices from mma fragments (register i: matrix i, this thread's row lane / 4,
// columns 2 (lane % 4), + 1), stored transposed: lane L gives the shared address of row L % 8 of
// matrix L / 8 (16 bytes, 16-byte aligned), which receives column L % 8 of the fragment matrix.
__device__ __forceinline__ void StMatrixX4Trans(uint32_t addr, uint32_t r0, uint32_t r1,
                                                uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// ---- copies (async proxy) ----
__device__ __forceinline__ void TmaLoad2D(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0,
                                          int c1, uint64_t cache_hint) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "l"(cache_hint)
      : "memory");
}
__device__ __forceinline__ void BulkLoad(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar,
                                         uint64_t cache_hint) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(cache_hint)
      : "memory");
}
// Shared -> global through a tensor map (bulk async-group completion: BulkCommitGroup, then
// BulkWaitGroupRead before the source is written again or the CTA exits; the writes need no wait).
// Elements outside the map's dimensions are not written.
__device__ __forceinline__ void TmaStore2D(const CUtensorMap* map, uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void BulkCommitGroup() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Until at most kPending of this thread's newest bulk groups still read their shared sources.
template <int kPending>
__device__ __forceinline__ void BulkWaitGroupRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}
__device__ __forceinline__ void PrefetchTensorMap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
// Tensor maps rewritten on the device (bound plans, internal/bind_fill.cuh): the writer copies
// the map into global memory, replaces its global address there and releases it to the tensormap
// proxy; every CTA that uses such a map acquires it first (stream order alone does not order the
// tensormap proxy).
__device__ __forceinline__ void TensorMapReplaceAddressGlobal(CUtensorMap* map, uint64_t addr) {
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "l"(addr)
               : "memory");
}
// Orders this thread's earlier writes of tensor maps (generic proxy) before the tensormap-proxy
// reads of any thread that acquires them.
__device__ __forceinline__ void FenceTensorMapRelease() {
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
}
__device__ __forceinline__ void TensorMapAcquire(const CUtensorMap* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(
                   reinterpret_cast<uint64_t>(map))
               : "memory");
}
// A pointer another grid wrote (the binding block): from L2, never a stale L1 line of an earlier
// grid on this SM.
template <typename T>
__device__ __forceinline__ T* LdPointerCg(T* const* p) {
  return reinterpret_cast<T*>(__ldcg(reinterpret_cast<const unsigned long long*>(p)));
}
// A word the host reads over the bus (system scope).
__device__ __forceinline__ void StRelaxedSys(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// A word the host releases over the bus (system scope): the loads after it see what the host
// wrote before its release store.
__device__ __forceinline__ uint32_t LdAcquireSys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// createpolicy values (L2 eviction priority hints).
__device__ __forceinline__ uint64_t PolicyEvictFirst() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t PolicyEvictLast() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}

// Generic-proxy shared-memory writes -> visible to the async proxy (wgmma operand reads).
__device__ __forceinline__ void FenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Generic-proxy global-memory accesses <-> async-proxy (TMA) accesses of the same memory.
__device__ __forceinline__ void FenceProxyAsyncGlobal() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
__device__ __forceinline__ uint32_t LdAcquireGpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void StReleaseGpu(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void RedReleaseGpuAdd(uint32_t* p, uint32_t v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Atomic add returning the old value, acquire + release at GPU scope.
__device__ __forceinline__ uint32_t AtomAddAcqRelGpu(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}

__device__ __forceinline__ uint32_t AtomExchRelaxedGpu(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.relaxed.gpu.global.exch.b32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}
__device__ __forceinline__ uint32_t LdRelaxedGpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// Nanoseconds (%globaltimer: one clock for the whole GPU).
__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// ---- barriers, registers, PDL ----
__device__ __forceinline__ void NamedBarrierSync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void NamedBarrierArrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
template <uint32_t kRegs>
__device__ __forceinline__ void RegAlloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <uint32_t kRegs>
__device__ __forceinline__ void RegDealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
__device__ __forceinline__ void GridDependencyWait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void GridDependentsLaunch() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// ---- wgmma ----
__device__ __forceinline__ void WgmmaFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving accumulator accesses across wgmma boundaries.
__device__ __forceinline__ void FenceRegister(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void FenceRegister(uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

// Shared-memory matrix descriptor, K-major operand in the 128-byte swizzle layout: rows of 128
// bytes, 8-row groups 1024 bytes apart (SBO), base 1024-byte aligned (k-steps inside the row
// advance the start address by 32 bytes, which the hardware swizzles consistently).
__device__ __forceinline__ uint64_t SmemDescSw128(uint32_t smem_addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);  // start address
  desc |= static_cast<uint64_t>(1) << 16;                      // LBO (unused for swizzled K-major)
  desc |= static_cast<uint64_t>(1024 >> 4) << 32;              // SBO
  desc |= static_cast<uint64_t>(1) << 62;                      // 128B swizzle
  return desc;
}

}  // namespace encore::gemm::sm90
