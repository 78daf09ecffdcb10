//! The global allocator of `forcegate serve` and its benches: mimalloc,
//! asked the way C asks it.
//!
//! glibc's allocator spent a tenth of a decision consolidating its free
//! lists each time a response grew past 1 KiB; mimalloc does not. The
//! `mimalloc` crate's wrapper sends every request through
//! `mi_malloc_aligned`, whose alignment checks cost ~5% of a decision's
//! instructions (a decision makes ~280 allocations). Nearly all of Rust's
//! requests ask for 8 bytes of alignment or less, which every mimalloc block
//! has, so they go to plain `mi_malloc`; larger alignments keep the aligned
//! calls.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Alignment every mimalloc block has, whatever its size class (a word).
const BLOCK_ALIGN: usize = std::mem::size_of::<usize>();

/// mimalloc as the Rust global allocator.
pub struct MiMalloc;

// SAFETY: mimalloc's functions are thread-safe and return null on failure;
// blocks from `mi_malloc`/`mi_zalloc`/`mi_realloc` are aligned to
// `BLOCK_ALIGN`, so they are used only when the layout asks for no more.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's comment.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's comment.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`'s alignment.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block honours its layout's alignment, across size classes
    /// (24- and 40-byte classes are only word-aligned) and both paths.
    #[test]
    fn blocks_are_aligned_as_asked() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 24, 40, 100, 1000, 5000, 70_000] {
                let size = size.max(align);
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; every block is freed with its layout.
                unsafe {
                    let p = MiMalloc.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc {size}/{align}");
                    p.write_bytes(0xab, size);
                    let q = MiMalloc.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0, "realloc {size}/{align}");
                    assert_eq!(*q.add(size - 1), 0xab, "realloc keeps the bytes");
                    MiMalloc.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = MiMalloc.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zeroed {size}/{align}");
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    MiMalloc.dealloc(z, layout);
                }
            }
        }
    }
}
