//! Exact heap accounting inside a solution's library, for the judge's
//! memory checks.
//!
//! [`crate::export!`] installs [`Counting`] as the library's global
//! allocator: it forwards every request to the system allocator and keeps
//! three counters (bytes live now, the most ever live, allocations made).
//! The worker reads them through the exported `harness_heap` after building
//! a state of size `n`, so a memory claim ("bounded by capacity") is judged
//! on exact numbers that do not depend on timing or load: the same
//! operations give the same bytes on every run.
//!
//! A cdylib has exactly one global allocator, so a solution that declares
//! its own `#[global_allocator]` does not build; the build error names this
//! module.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The counters, as `harness_heap` returns them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapStats {
    /// Bytes allocated and not yet freed.
    pub live: u64,
    /// The largest `live` ever was.
    pub peak: u64,
    /// Allocations made (reallocations count once each).
    pub allocations: u64,
}

/// The system allocator with counters. Used through `export!`; there is no
/// reason to name it in a solution.
pub struct Counting {
    live: AtomicU64,
    peak: AtomicU64,
    allocations: AtomicU64,
}

impl Counting {
    pub const fn new() -> Self {
        Counting { live: AtomicU64::new(0), peak: AtomicU64::new(0), allocations: AtomicU64::new(0) }
    }

    pub fn stats(&self) -> HeapStats {
        HeapStats {
            live: self.live.load(Relaxed),
            peak: self.peak.load(Relaxed),
            allocations: self.allocations.load(Relaxed),
        }
    }

    fn grew(&self, bytes: u64) {
        let now = self.live.fetch_add(bytes, Relaxed) + bytes;
        self.peak.fetch_max(now, Relaxed);
    }
}

impl Default for Counting {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the counters are
// bookkeeping only and never influence what is returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.allocations.fetch_add(1, Relaxed);
            self.grew(layout.size() as u64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.allocations.fetch_add(1, Relaxed);
            self.grew(layout.size() as u64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        self.live.fetch_sub(layout.size() as u64, Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.allocations.fetch_add(1, Relaxed);
            self.live.fetch_sub(layout.size() as u64, Relaxed);
            self.grew(new_size as u64);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_live_peak_and_allocations() {
        let c = Counting::new();
        let small = Layout::from_size_align(100, 8).unwrap();
        // SAFETY: the layouts are valid and every pointer is freed once with
        // the layout it was allocated with.
        unsafe {
            let a = c.alloc(small);
            let b = c.alloc_zeroed(small);
            assert_eq!(c.stats(), HeapStats { live: 200, peak: 200, allocations: 2 });
            let b = c.realloc(b, small, 300);
            assert_eq!(c.stats(), HeapStats { live: 400, peak: 400, allocations: 3 });
            c.dealloc(a, small);
            c.dealloc(b, Layout::from_size_align(300, 8).unwrap());
        }
        assert_eq!(c.stats(), HeapStats { live: 0, peak: 400, allocations: 3 });
    }
}
