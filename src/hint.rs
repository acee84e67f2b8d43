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
