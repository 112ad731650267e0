//! Stable LSD radix sort of `(f64, u32)` pairs by the f64, for the large cuts of the
//! Mondrian family: six 11-bit passes (skipping digits every key shares) instead of a
//! comparison sort's log n passes. Equal keys (−0.0 and +0.0 included) keep their order,
//! exactly as `slice::sort_by` with `partial_cmp` would leave them.

/// Bits of `v` whose unsigned order is the numeric order of `v` (−0.0 folded into +0.0).
#[inline]
pub fn order_bits(v: f64) -> u64 {
    let b = (if v == 0.0 { 0.0 } else { v }).to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

const DIGIT: u32 = 11;
const BUCKETS: usize = 1 << DIGIT;
const PASSES: u32 = 64_u32.div_ceil(DIGIT);

/// Sorts `items` by their f64 (NaN-free), stably, using `spare` (same length) as scratch.
pub fn sort_stable(items: &mut [(f64, u32)], spare: &mut [(f64, u32)]) {
    assert_eq!(items.len(), spare.len(), "scratch must match");
    let mut counts = vec![[0usize; BUCKETS]; PASSES as usize];
    for &(v, _) in items.iter() {
        let k = order_bits(v);
        for (p, c) in counts.iter_mut().enumerate() {
            c[((k >> (p as u32 * DIGIT)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    let n = items.len();
    let (mut src, mut dst) = (items, spare);
    let mut in_spare = false;
    for (p, c) in counts.iter_mut().enumerate() {
        if c.contains(&n) {
            continue; // every key has the same digit here
        }
        let mut offset = 0;
        for count in c.iter_mut() {
            let here = *count;
            *count = offset;
            offset += here;
        }
        for &item in src.iter() {
            let digit = ((order_bits(item.0) >> (p as u32 * DIGIT)) as usize) & (BUCKETS - 1);
            dst[c[digit]] = item;
            c[digit] += 1;
        }
        std::mem::swap(&mut src, &mut dst);
        in_spare = !in_spare;
    }
    if in_spare {
        dst.copy_from_slice(src); // `dst` is the caller's `items` again
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equals_the_std_stable_sort(values in prop::collection::vec(
            prop_oneof![-3i8..3i8, any::<i8>()].prop_map(|v| v as f64 / 3.0), 0..3000)
        ) {
            let mut items: Vec<(f64, u32)> = values.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
            items.push((-0.0, u32::MAX)); // -0.0 ties with the zeros
            let mut want = items.clone();
            want.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
            let mut spare = vec![(0.0, 0); items.len()];
            sort_stable(&mut items, &mut spare);
            prop_assert_eq!(items.iter().map(|x| x.1).collect::<Vec<_>>(), want.iter().map(|x| x.1).collect::<Vec<_>>());
        }
    }

    #[test]
    fn orders_extremes() {
        let mut v: Vec<(f64, u32)> = [f64::MAX, -1e-300, 0.0, f64::MIN, 1e-300, -0.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, i as u32))
            .collect();
        let mut s = vec![(0.0, 0); v.len()];
        sort_stable(&mut v, &mut s);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), vec![3, 1, 2, 5, 4, 0]);
    }
}
