; The allocator the precompiled kernel library links in place of numba's runtime (NRT):
; read by workbench/perf/build.py (RUNTIME_IR), which explains the block layout.
declare ptr @malloc(i64)
declare void @free(ptr)

define ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align) {
entry:
  %align64 = zext i32 %align to i64
  %nonzero = icmp ugt i64 %align64, 1
  %step = select i1 %nonzero, i64 %align64, i64 1
  %head = add i64 %size, 48
  %total = add i64 %head, %step
  %block = call ptr @malloc(i64 %total)
  %failed = icmp eq ptr %block, null
  br i1 %failed, label %none, label %fill
none:
  ret ptr null
fill:
  %base = ptrtoint ptr %block to i64
  %after = add i64 %base, 48
  %less = sub i64 %step, 1
  %up = add i64 %after, %less
  %mask = xor i64 %less, -1
  %start = and i64 %up, %mask
  %data = inttoptr i64 %start to ptr
  store i64 1, ptr %block, align 8
  %dtor = getelementptr i8, ptr %block, i64 8
  store ptr null, ptr %dtor, align 8
  %info = getelementptr i8, ptr %block, i64 16
  store ptr null, ptr %info, align 8
  %dataslot = getelementptr i8, ptr %block, i64 24
  store ptr %data, ptr %dataslot, align 8
  %sizeslot = getelementptr i8, ptr %block, i64 32
  store i64 %size, ptr %sizeslot, align 8
  %allocslot = getelementptr i8, ptr %block, i64 40
  store ptr null, ptr %allocslot, align 8
  ret ptr %block
}

define ptr @NRT_MemInfo_alloc_safe_aligned(i64 %size, i32 %align) {
entry:
  %block = call ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align)
  ret ptr %block
}

define void @NRT_MemInfo_call_dtor(ptr %block) {
entry:
  call void @free(ptr %block)
  ret void
}
