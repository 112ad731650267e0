//! A value alone on its cache line: for the words that one thread writes while another
//! reads its neighbours (the team's pass state, each part's claims, each band's shared
//! limit). Sharing a line, every such write would first take the line back from the
//! reader's core.

use std::ops::Deref;

/// `T` aligned, and so padded, to 128 bytes: the adjacent-line prefetcher moves 64-byte
/// lines in pairs, so two words 64 bytes apart would still travel together.
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct CacheLine<T>(pub(crate) T);

impl<T> Deref for CacheLine<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
