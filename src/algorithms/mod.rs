//! The microaggregation algorithms, one family per file (docs/algorithms.md#the-catalogue).

pub mod cbfs;
pub mod centroid_index;
pub mod clustering;
pub mod clusters;
mod cut_direction;
pub mod md;
pub mod mdav;
pub mod mdav_star;
pub mod mhm;
pub mod mona;
pub mod mondrian;
pub mod ona;
pub mod ona_star;
pub mod optimal;
pub mod spatial;
#[cfg(test)]
pub(crate) mod test_shapes;
pub mod vmdav;
