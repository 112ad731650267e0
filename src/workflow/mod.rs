//! The disclosure-control workflow around the algorithms (DESIGN §8, §10): the steps of the
//! pipeline that algorithms know nothing about.

pub mod parts;
