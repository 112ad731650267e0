//! The microaggregation algorithms, one family per file (DESIGN §4).

pub mod mdav;
pub mod mondrian;
pub mod norm_order;
pub mod remaining;
