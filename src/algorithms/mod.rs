//! The microaggregation algorithms, one family per file (docs/algorithms.md#the-catalogue).

pub mod cbfs;
pub mod centroid_index;
pub mod clustering;
pub mod clusters;
pub mod compact;
mod cut_direction;
pub mod md;
pub mod mdav;
pub mod mdav_star;
pub mod mhm;
pub mod mona;
pub mod mondrian;
pub mod norm_order;
pub mod ona;
pub mod ona_star;
pub mod optimal;
pub mod remaining;
pub mod spatial;
#[cfg(test)]
pub(crate) mod test_shapes;
#[cfg(test)]
mod textbook_mdav;
pub mod vmdav;
