//! Earth mover's distance between a class's distribution of a confidential attribute and the
//! whole file's (Soria-Comas et al., "t-Closeness through Microaggregation", TKDE 2015,
//! §2.2; Li, Li and Venkatasubramanian's t-closeness). Ordered attributes (the m distinct
//! values of the file, ranked 0..m): EMD = (1/(m−1)) Σ_{i<m−1} |F_P(i) − F_Q(i)|, F the
//! cumulative distributions (0 when m = 1). Nominal attributes: ½ Σ |p_i − q_i|.
//!
//! A class is held as a sparse histogram ([`Hist`]) that grows or shrinks one record at a
//! time, so a growing group's EMD is updated from its few distinct values, never recounted:
//! the ordered EMD of a class with u distinct values costs O(u log m) (between two of its
//! values F_P is constant and F_Q is monotone, so each stretch is summed in closed form from
//! prefix sums of F_Q), the nominal one O(u).

/// The whole file's distribution Q of one confidential attribute, with what the EMD needs.
#[derive(Debug, Clone)]
pub struct Reference {
    ordered: bool,
    /// q_i, the share of value i.
    q: Vec<f64>,
    /// F_Q(i) = Σ_{j≤i} q_j.
    cdf: Vec<f64>,
    /// Σ_{j<i} F_Q(j), i = 0..=m.
    cdf_sums: Vec<f64>,
}

impl Reference {
    /// The distribution of `codes` (values 0..m; ranks when `ordered`), each record counting
    /// with its `mass` (its weight; 1 without weights). A file whose masses sum to 0 counts
    /// records instead.
    pub fn new(codes: &[u32], m: usize, mass: &[f64], ordered: bool) -> Self {
        let mut q = vec![0.0; m];
        let total: f64 = mass.iter().sum();
        for (&c, &w) in codes.iter().zip(mass) {
            q[c as usize] += if total > 0.0 { w } else { 1.0 };
        }
        let total = if total > 0.0 { total } else { codes.len() as f64 };
        q.iter_mut().for_each(|v| *v /= total);
        let mut cdf = Vec::with_capacity(m);
        let mut acc = 0.0;
        for &v in &q {
            acc += v;
            cdf.push(acc);
        }
        if let Some(last) = cdf.last_mut() {
            *last = 1.0;
        }
        let mut cdf_sums = Vec::with_capacity(m + 1);
        cdf_sums.push(0.0);
        let mut acc = 0.0;
        for &f in &cdf {
            acc += f;
            cdf_sums.push(acc);
        }
        Reference { ordered, q, cdf, cdf_sums }
    }

    /// EMD between the class `hist` and this distribution.
    pub fn emd(&self, hist: &Hist) -> f64 {
        let total = hist.total();
        if total <= 0.0 {
            return 0.0;
        }
        if self.ordered { self.ordered_emd(hist, total) } else { self.nominal_emd(hist, total) }
    }

    /// ½ Σ|p − q| = ½ (1 + Σ_{i in class} (|p_i − q_i| − q_i)).
    fn nominal_emd(&self, hist: &Hist, total: f64) -> f64 {
        let inside: f64 = hist
            .entries
            .iter()
            .map(|e| {
                let (p, q) = (hist.mass_of(e) / total, self.q[e.code as usize]);
                (p - q).abs() - q
            })
            .sum();
        (0.5 * (1.0 + inside)).max(0.0)
    }

    /// Σ_{i<m−1} |F_P(i) − F_Q(i)| / (m − 1), F_P a step function with a step at each of the
    /// class's values.
    fn ordered_emd(&self, hist: &Hist, total: f64) -> f64 {
        let m = self.q.len();
        if m <= 1 {
            return 0.0;
        }
        let end = m - 1;
        let mut sum = 0.0;
        let (mut from, mut level) = (0usize, 0.0);
        for e in &hist.entries {
            sum += self.stretch(from, e.code as usize, level);
            level += hist.mass_of(e) / total;
            from = e.code as usize;
        }
        sum += self.stretch(from, end, level.min(1.0));
        sum / end as f64
    }

    /// Σ_{a≤i<b} |v − F_Q(i)|: F_Q is nondecreasing, so below the first i with F_Q(i) ≥ v
    /// the terms are v − F_Q(i) and above it F_Q(i) − v.
    fn stretch(&self, a: usize, b: usize, v: f64) -> f64 {
        if a >= b {
            return 0.0;
        }
        let s = a + self.cdf[a..b].partition_point(|&f| f < v);
        let below = v * (s - a) as f64 - (self.cdf_sums[s] - self.cdf_sums[a]);
        let above = (self.cdf_sums[b] - self.cdf_sums[s]) - v * (b - s) as f64;
        below + above
    }
}

/// One distinct value of a class: its code, its records' total mass and their number.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    code: u32,
    mass: f64,
    count: u32,
}

/// A class's distribution of one confidential attribute: its distinct values in ascending
/// order with their masses. A class whose masses sum to 0 (weights all zero) counts records,
/// as its release uses the unweighted aggregate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hist {
    entries: Vec<Entry>,
    mass: f64,
    count: u32,
}

impl Hist {
    /// Adds a record of value `code` and mass `mass`.
    pub fn add(&mut self, code: u32, mass: f64) {
        match self.entries.binary_search_by_key(&code, |e| e.code) {
            Ok(i) => {
                self.entries[i].mass += mass;
                self.entries[i].count += 1;
            }
            Err(i) => self.entries.insert(i, Entry { code, mass, count: 1 }),
        }
        self.mass += mass;
        self.count += 1;
    }

    /// The EMD to `reference` this class would have with a record of value `code` and mass
    /// `mass` added; the class is left bit for bit as it was (adding then removing would
    /// leave the rounding of the masses, so the choices of a growing group would depend on
    /// the candidates tried before).
    pub fn emd_with(&mut self, reference: &Reference, code: u32, mass: f64) -> f64 {
        let total = self.mass;
        let at = self.entries.binary_search_by_key(&code, |e| e.code);
        let at = at.map(|i| (i, self.entries[i].mass));
        self.add(code, mass);
        let emd = reference.emd(self);
        match at {
            Ok((i, before)) => {
                self.entries[i].count -= 1;
                self.entries[i].mass = before;
            }
            Err(i) => {
                self.entries.remove(i);
            }
        }
        self.mass = total;
        self.count -= 1;
        emd
    }

    /// Adds every record of `other` (two classes merged).
    pub fn absorb(&mut self, other: &Hist) {
        for e in &other.entries {
            match self.entries.binary_search_by_key(&e.code, |s| s.code) {
                Ok(i) => {
                    self.entries[i].mass += e.mass;
                    self.entries[i].count += e.count;
                }
                Err(i) => self.entries.insert(i, *e),
            }
        }
        self.mass += other.mass;
        self.count += other.count;
    }

    /// Whether the class counts records rather than masses.
    fn by_count(&self) -> bool {
        self.mass <= 0.0
    }

    fn total(&self) -> f64 {
        if self.by_count() { self.count as f64 } else { self.mass }
    }

    fn mass_of(&self, e: &Entry) -> f64 {
        if self.by_count() { e.count as f64 } else { e.mass }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The EMD from its definition, dense over all m values, from the class's records.
    pub(crate) fn direct_emd(
        file: &[u32],
        file_mass: &[f64],
        class: &[usize],
        m: usize,
        ordered: bool,
    ) -> f64 {
        let share = |ids: &mut dyn Iterator<Item = usize>| {
            let ids: Vec<usize> = ids.collect();
            let total: f64 = ids.iter().map(|&i| file_mass[i]).sum();
            let mut p = vec![0.0; m];
            for &i in &ids {
                p[file[i] as usize] += if total > 0.0 { file_mass[i] } else { 1.0 };
            }
            let total = if total > 0.0 { total } else { ids.len() as f64 };
            p.iter().map(|v| v / total).collect::<Vec<f64>>()
        };
        let q = share(&mut (0..file.len()));
        let p = share(&mut class.iter().copied());
        if ordered {
            if m == 1 {
                return 0.0;
            }
            let (mut acc, mut sum) = (0.0, 0.0);
            for i in 0..m - 1 {
                acc += p[i] - q[i];
                sum += f64::abs(acc);
            }
            sum / (m - 1) as f64
        } else {
            0.5 * p.iter().zip(&q).map(|(a, b)| (a - b).abs()).sum::<f64>()
        }
    }

    #[test]
    fn known_values() {
        // File 0,1,2,3 uniform; class {0,0}: cumulative gaps 3/4, 1/2, 1/4 → 1.5 / 3.
        let codes = [0u32, 1, 2, 3];
        let r = Reference::new(&codes, 4, &[1.0; 4], true);
        let mut h = Hist::default();
        h.add(0, 1.0);
        h.add(0, 1.0);
        assert!((r.emd(&h) - 0.5).abs() < 1e-12);
        let nominal = Reference::new(&codes, 4, &[1.0; 4], false);
        assert!((nominal.emd(&h) - 0.75).abs() < 1e-12);
        // With a record of value 1: p = (2/3, 1/3, 0, 0), ½(5/12 + 1/12 + 1/4 + 1/4) = 1/2.
        assert!((h.emd_with(&nominal, 1, 1.0) - 0.5).abs() < 1e-12);
        assert!((nominal.emd(&h) - 0.75).abs() < 1e-12, "a try leaves the class");
        let mut h = Hist::default();
        for c in 0..4 {
            h.add(c, 1.0);
        }
        assert!(r.emd(&h) < 1e-12, "the whole file is at distance 0");
    }

    proptest! {
        /// Every grown, tried and merged histogram gives the EMD of the definition, and a
        /// try leaves the histogram bit for bit as it was.
        #[test]
        fn incremental_matches_definition(
            file in prop::collection::vec((0u32..6, 0u32..3), 2..40),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 1..12),
            ordered in any::<bool>(),
            weighted in any::<bool>(),
        ) {
            let codes: Vec<u32> = file.iter().map(|p| p.0).collect();
            let m = *codes.iter().max().unwrap() as usize + 1;
            // Thirds: masses whose sums round.
            let mass: Vec<f64> =
                file.iter().map(|p| if weighted { p.1 as f64 / 3.0 } else { 1.0 }).collect();
            let r = Reference::new(&codes, m, &mass, ordered);
            let ids: Vec<usize> = picks.iter().map(|i| i.index(codes.len())).collect();
            let mut h = Hist::default();
            for &i in &ids[1..] {
                h.add(codes[i], mass[i]);
            }
            let want = direct_emd(&codes, &mass, &ids[1..], m, ordered);
            prop_assert!(ids.len() == 1 || (r.emd(&h) - want).abs() < 1e-9, "{} vs {}", r.emd(&h), want);
            let before = h.clone();
            let with = h.emd_with(&r, codes[ids[0]], mass[ids[0]]);
            prop_assert_eq!(&h, &before);
            let want = direct_emd(&codes, &mass, &ids, m, ordered);
            prop_assert!((with - want).abs() < 1e-9, "{} vs {}", with, want);
            // The first record merged in from a class of its own.
            let mut single = Hist::default();
            single.add(codes[ids[0]], mass[ids[0]]);
            h.absorb(&single);
            prop_assert!((r.emd(&h) - want).abs() < 1e-9);
        }
    }
}
