//! The native mixed key (docs/algorithms.md#mixed-keys): numeric columns and nominal columns
//! as integer codes, scored in the geometry of the one-hot embedding (docs/mixed.md) without
//! building its columns.
//!
//! A nominal attribute with levels 0..L−1 and weight w stands for L one-hot columns scaled by
//! w/√2. Between two records it adds w²·[a ≠ b] to the squared distance; against a centroid
//! whose levels have frequencies p it adds (w²/2)·(1 − 2·p[a] + ‖p‖²). Both are the dense
//! embedding's distances exactly, at O(attributes) per distance.
//!
//! The interface other callers (exact MDAV, `algorithms/mdav/mixed.rs`; t-closeness, linkage, the Dask engine later)
//! use is small: [`MixedKey`] (the working data, moved like the working copy), its references
//! (a record or a centroid, [`MixedKey::reference_to`], [`MixedKey::centroid`]) and
//! [`MixedKey::scan`] (a scan of the first `m` positions feeding the kernels' selections).

mod codes;
mod key;
mod reference;

pub use key::MixedKey;
pub use reference::Reference;
pub(crate) use reference::Scorer;
