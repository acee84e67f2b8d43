//! CPU hints shared by the hot loops of encoding and training.

/// Asks the CPU to bring the cache line at `p` closer (a hint: no effect on
/// memory contents; a no-op off x86-64).
#[inline(always)]
#[allow(unsafe_code)] // a prefetch hint, see the SAFETY comment
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults and never changes memory, whatever the
    // address; callers pass addresses inside live allocations.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the kernel to back the memory of `v` (its whole capacity) with
/// transparent huge pages, where the system offers them on request (Linux
/// `madvise` mode). Call it before the memory is first written: the pages
/// faulted in afterwards are huge. Large arrays visited at random (the merge
/// loop's nodes) then miss the TLB far less. A hint: no effect
/// on contents; ignored where unsupported.
pub fn advise_huge<T>(v: &mut Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes >= 1 << 21 {
        madvise_huge(v.as_mut_ptr().cast(), bytes);
    }
}

#[allow(unsafe_code)] // one madvise call, see the SAFETY comment
fn madvise_huge(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        let page = 4096usize;
        let start = (ptr as usize) & !(page - 1);
        let end = ptr as usize + len;
        // SAFETY: madvise only changes how the kernel backs pages of this
        // process's own mapping [start, end), which holds the allocation
        // (rounded down to its first page); MADV_HUGEPAGE never changes the
        // contents or validity of memory, and a failure (EINVAL on kernels
        // without THP) is ignored: the hint is optional.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}
