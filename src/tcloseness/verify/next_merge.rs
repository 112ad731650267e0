//! Which class verification merges next and into which class (Soria-Comas et al., TKDE
//! 2015, §5): among the alive classes, the one of **largest EMD, ties to the lowest
//! label**, joins the alive class whose key centroid is **nearest by
//! [`Centroid::gap2`], ties to the lowest label**. A
//! deterministic rule that depends on the classes only, never on the order they were
//! visited in.
//!
//! [`Indexed`] answers both questions without scanning the g alive classes twice per
//! merge: a max-heap of (EMD, label) with lazy deletion (an entry whose class has died or
//! whose EMD has changed since is dropped when it reaches the top), O(log g) a merge, and
//! the alive centroids of [`AliveCentroids`] (a k-d tree in low dimension), which reports
//! the nearest class exactly as a scan does. `Scans`, the rule written as two plain scans,
//! is the reference the tests compare it to.

use super::alive_centroids::AliveCentroids;
use crate::float::order_bits;
use crate::index::IndexChoice;
use crate::tcloseness::space::Centroid;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The alive classes (labels 0..g, all alive at first, centroids of type `P`), asked for
/// the next merge.
pub trait NextMerge<P: Centroid> {
    /// Every class alive, class `c` with centroid `centroids[c]` and EMD `emd[c]`; an index
    /// of the centroids as `choice` says, where there is one.
    fn new(centroids: &[P], emd: &[f64], choice: IndexChoice) -> Self;
    /// The alive class of largest `emd`, ties to the lowest label; `None` when fewer than
    /// two classes are alive (nothing left to merge into). `emd` holds the current EMD of
    /// every alive class.
    fn worst(&mut self, emd: &[f64]) -> Option<usize>;
    /// Takes class `worst` (alive) out of the alive classes and returns the alive class
    /// whose centroid is nearest to its centroid, ties to the lowest label (one is left:
    /// [`worst`](Self::worst) said so). `centroids` (by label) hold every alive class's
    /// current centroid.
    fn take_nearest(&mut self, worst: usize, centroids: &[P]) -> usize;
    /// Alive class `class` has absorbed another: its new centroid (in `centroids`) and EMD.
    fn moved(&mut self, class: usize, centroids: &[P], emd: f64);
}

/// The rule from a heap of EMDs and an index of the alive centroids (see the module docs).
#[derive(Debug, Clone)]
pub struct Indexed<P> {
    /// (EMD in [`order_bits`], lowest label first): the top is the worst class, once stale
    /// entries are dropped.
    queue: BinaryHeap<(u64, Reverse<u32>)>,
    /// The alive classes.
    alive: AliveCentroids<P>,
}

impl<P: Centroid> NextMerge<P> for Indexed<P> {
    fn new(centroids: &[P], emd: &[f64], choice: IndexChoice) -> Self {
        let queue = emd.iter().enumerate().map(|(c, &e)| (order_bits(e), Reverse(c as u32)));
        let alive = AliveCentroids::new(centroids, choice);
        Indexed { queue: queue.collect(), alive }
    }

    fn worst(&mut self, emd: &[f64]) -> Option<usize> {
        if self.alive.len() < 2 {
            return None;
        }
        while let Some(&(bits, Reverse(c))) = self.queue.peek() {
            let c = c as usize;
            if self.alive.contains(c) && bits == order_bits(emd[c]) {
                return Some(c);
            }
            self.queue.pop();
        }
        unreachable!("every alive class has an entry of its current EMD")
    }

    fn take_nearest(&mut self, worst: usize, centroids: &[P]) -> usize {
        self.alive.remove(worst, centroids);
        self.alive.nearest(&centroids[worst]).expect("an alive class besides the worst")
    }

    fn moved(&mut self, class: usize, centroids: &[P], emd: f64) {
        self.alive.moved(class, &centroids[class]);
        self.queue.push((order_bits(emd), Reverse(class as u32)));
    }
}

/// The rule as two scans of the alive classes in label order: the reference of the tests.
#[cfg(test)]
#[derive(Debug, Clone)]
pub struct Scans {
    alive: Vec<bool>,
}

#[cfg(test)]
impl<P: Centroid> NextMerge<P> for Scans {
    fn new(_: &[P], emd: &[f64], _: IndexChoice) -> Self {
        Scans { alive: vec![true; emd.len()] }
    }

    fn worst(&mut self, emd: &[f64]) -> Option<usize> {
        let mut alive = (0..self.alive.len()).filter(|&c| self.alive[c]);
        let first = alive.next()?;
        let mut others = alive.peekable();
        others.peek()?;
        Some(others.fold(first, |w, c| if emd[c] > emd[w] { c } else { w }))
    }

    fn take_nearest(&mut self, worst: usize, centroids: &[P]) -> usize {
        self.alive[worst] = false;
        let alive = (0..self.alive.len()).filter(|&c| self.alive[c]);
        let scored = alive.map(|c| (centroids[worst].gap2(&centroids[c]), c));
        let nearest = scored.reduce(|best, s| if s.0 < best.0 { s } else { best });
        nearest.expect("an alive class besides the worst").1
    }

    fn moved(&mut self, _: usize, _: &[P], _: f64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both implementations break ties to the lowest label, for the worst class and for the
    /// nearest one, and follow a moved centroid and a changed EMD.
    fn ties_to_the_lowest_label<P: NextMerge<Vec<f64>>>(choice: IndexChoice) {
        // 1-D centroids 0, 1, 2 and 5; classes 1 and 3 tie for the largest EMD.
        let mut emd = vec![0.2, 0.5, 0.1, 0.5];
        let mut centroids = vec![vec![0.0], vec![1.0], vec![2.0], vec![5.0]];
        let mut next = P::new(&centroids, &emd, choice);
        assert_eq!(next.worst(&emd), Some(1));
        // From 1: classes 0 and 2 both at distance 1.
        assert_eq!(next.take_nearest(1, &centroids), 0);
        (emd[0], centroids[0]) = (0.5, vec![0.5]);
        next.moved(0, &centroids, emd[0]);
        assert_eq!(next.worst(&emd), Some(0), "0 now ties with 3");
        assert_eq!(next.take_nearest(0, &centroids), 2);
        (emd[2], centroids[2]) = (0.5, vec![3.5]);
        next.moved(2, &centroids, emd[2]);
        assert_eq!(next.worst(&emd), Some(2), "2 now ties with 3; 0 is gone");
        assert_eq!(next.take_nearest(2, &centroids), 3);
        assert_eq!(next.worst(&emd), None, "one class alive");
    }

    #[test]
    fn every_implementation_breaks_ties_to_the_lowest_label() {
        ties_to_the_lowest_label::<Indexed<Vec<f64>>>(IndexChoice::On);
        ties_to_the_lowest_label::<Indexed<Vec<f64>>>(IndexChoice::Off);
        ties_to_the_lowest_label::<Scans>(IndexChoice::Off);
    }
}
