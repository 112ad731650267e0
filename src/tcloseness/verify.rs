//! Verification after construction (Soria-Comas et al., TKDE 2015, §5: a class above t is
//! merged): while some class is farther than t from the file, the class with the largest
//! EMD joins the class whose key centroid is nearest. Also the whole of the "merge"
//! algorithm, applied to a k-anonymous partition. Ends at the latest with one class, the
//! job's records, which the caller has checked to be t-close.

use super::confidential::{Confidential, Profile};
use super::pool::row;

/// A class counts as t-close up to this rounding slack on its EMD.
pub const SLACK: f64 = 1e-12;

/// Merges classes of `labels` (0..g over the records of `rows`, n × d) until every class is
/// within `t` (plus [`SLACK`]); returns the labels 0..g′ of the merged classes (in the order
/// of their lowest original label) and the number of merges.
pub fn merge_until_close(
    rows: &[f64],
    d: usize,
    labels: &[u32],
    conf: &Confidential,
    t: f64,
) -> (Vec<u32>, usize) {
    let g = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
    let mut profiles: Vec<Profile> = vec![conf.empty(); g];
    let mut sums = vec![vec![0.0; d]; g];
    let mut sizes = vec![0usize; g];
    for (i, &l) in labels.iter().enumerate() {
        let l = l as usize;
        conf.add(&mut profiles[l], i);
        sums[l].iter_mut().zip(row(rows, d, i)).for_each(|(s, v)| *s += v);
        sizes[l] += 1;
    }
    let mut emd: Vec<f64> = profiles.iter().map(|p| conf.emd(p)).collect();
    let mut into: Vec<usize> = (0..g).collect();
    let mut alive: Vec<usize> = (0..g).collect();
    // Squared distance from point `c` to the centroid of class a.
    let gap = |c: &[f64], sum: &[f64], n: usize| -> f64 {
        c.iter().zip(sum).map(|(x, s)| (x - s / n as f64).powi(2)).sum()
    };
    let mut merges = 0;
    while alive.len() > 1 {
        let worst = *alive
            .iter()
            .max_by(|&&a, &&b| emd[a].total_cmp(&emd[b]).then(b.cmp(&a)))
            .expect("a class");
        if emd[worst] <= t + SLACK {
            break;
        }
        let c: Vec<f64> = sums[worst].iter().map(|s| s / sizes[worst] as f64).collect();
        let target = *alive
            .iter()
            .filter(|&&a| a != worst)
            .min_by(|&&a, &&b| {
                let (da, db) = (gap(&c, &sums[a], sizes[a]), gap(&c, &sums[b], sizes[b]));
                da.total_cmp(&db).then(a.cmp(&b))
            })
            .expect("another class");
        let moved = std::mem::take(&mut profiles[worst]);
        profiles[target].absorb(&moved);
        let moved = std::mem::take(&mut sums[worst]);
        sums[target].iter_mut().zip(&moved).for_each(|(s, v)| *s += v);
        sizes[target] += sizes[worst];
        emd[target] = conf.emd(&profiles[target]);
        into[worst] = target;
        alive.retain(|&a| a != worst);
        merges += 1;
    }
    let mut compact = vec![u32::MAX; g];
    for (new, &a) in alive.iter().enumerate() {
        compact[a] = new as u32;
    }
    let root = |mut l: usize| {
        while into[l] != l {
            l = into[l];
        }
        l
    };
    (labels.iter().map(|&l| compact[root(l as usize)]).collect(), merges)
}
