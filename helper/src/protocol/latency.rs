//! Request times, as a histogram that merges: the access log's lines of one sample, and
//! of every sample of a ramp's step, give one p50 and one p95 per endpoint without
//! keeping a time per request.
//!
//! The buckets are whole milliseconds below [`EXACT_BELOW`], then [`PER_OCTAVE`] to each
//! power of two (each about 3 % wide): a percentile is exact below 128 ms and at most one
//! bucket high above it (it is the bucket's upper end, so it never understates), and a
//! histogram has at most a few thousand buckets whatever it is fed.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Times below this many milliseconds have a bucket each.
pub const EXACT_BELOW: u64 = 128;
/// Buckets to each power of two above [`EXACT_BELOW`].
pub const PER_OCTAVE: u64 = 32;
/// log2 of [`EXACT_BELOW`].
const EXACT_BITS: u32 = 7;
/// log2 of [`PER_OCTAVE`].
const OCTAVE_BITS: u32 = 5;

/// The bucket of a time in milliseconds.
pub fn bucket_of(ms: u64) -> u32 {
    if ms < EXACT_BELOW {
        return ms as u32;
    }
    let octave = 63 - ms.leading_zeros(); // at least EXACT_BITS
    let sub = (ms >> (octave - OCTAVE_BITS)) & (PER_OCTAVE - 1);
    (EXACT_BELOW + u64::from(octave - EXACT_BITS) * PER_OCTAVE + sub) as u32
}

/// The least time in a bucket.
pub fn lower_of(bucket: u32) -> u64 {
    let bucket = u64::from(bucket);
    if bucket < EXACT_BELOW {
        return bucket;
    }
    let above = bucket - EXACT_BELOW;
    let octave = above / PER_OCTAVE + u64::from(EXACT_BITS);
    let sub = above % PER_OCTAVE;
    if octave >= 64 {
        return u64::MAX;
    }
    (1u64 << octave) | (sub << (octave - u64::from(OCTAVE_BITS)))
}

/// Buckets there are: the last holds `u64::MAX`.
const BUCKETS: u64 = EXACT_BELOW + (64 - EXACT_BITS as u64) * PER_OCTAVE;

/// The greatest time in a bucket.
pub fn upper_of(bucket: u32) -> u64 {
    if u64::from(bucket) + 1 >= BUCKETS {
        return u64::MAX;
    }
    lower_of(bucket + 1) - 1
}

/// Request times in milliseconds, counted by bucket, with their exact sum and maximum.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latencies {
    counts: BTreeMap<u32, u64>,
    sum_ms: u64,
    max_ms: Option<u64>,
}

/// As the timeline holds it: the buckets as `[least ms, count]` pairs, the sum and the
/// maximum.
#[derive(Serialize, Deserialize)]
struct Wire {
    buckets: Vec<(u64, u64)>,
    sum_ms: u64,
    max_ms: Option<u64>,
}

impl Serialize for Latencies {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Wire {
            buckets: self
                .counts
                .iter()
                .map(|(bucket, n)| (lower_of(*bucket), *n))
                .collect(),
            sum_ms: self.sum_ms,
            max_ms: self.max_ms,
        }
        .serialize(serializer)
    }
}

/// A timeline is the caller's file: each pair is put in the bucket its time falls in, so
/// whatever it says, the histogram has no more buckets than one fed by the recorder.
impl<'de> Deserialize<'de> for Latencies {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let mut latencies = Latencies {
            sum_ms: wire.sum_ms,
            max_ms: wire.max_ms,
            ..Latencies::default()
        };
        for (ms, n) in wire.buckets {
            let count = latencies.counts.entry(bucket_of(ms)).or_default();
            *count = count.saturating_add(n);
        }
        Ok(latencies)
    }
}

impl Latencies {
    /// Counts one request of `ms` milliseconds.
    pub fn record(&mut self, ms: u64) {
        let count = self.counts.entry(bucket_of(ms)).or_default();
        *count = count.saturating_add(1);
        self.sum_ms = self.sum_ms.saturating_add(ms);
        self.max_ms = Some(self.max_ms.map_or(ms, |m| m.max(ms)));
    }

    /// Adds `other`'s requests.
    pub fn merge(&mut self, other: &Latencies) {
        for (bucket, n) in &other.counts {
            let count = self.counts.entry(*bucket).or_default();
            *count = count.saturating_add(*n);
        }
        self.sum_ms = self.sum_ms.saturating_add(other.sum_ms);
        self.max_ms = match (self.max_ms, other.max_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    pub fn count(&self) -> u64 {
        self.counts.values().fold(0, |a, n| a.saturating_add(*n))
    }

    pub fn max_ms(&self) -> Option<u64> {
        self.max_ms
    }

    /// The exact mean, ms.
    pub fn mean_ms(&self) -> Option<f64> {
        let n = self.count();
        (n > 0).then(|| self.sum_ms as f64 / n as f64)
    }

    /// The nearest-rank percentile (the time at 1-based rank ⌈p/100 · n⌉), as its bucket's
    /// greatest time but never above the maximum: exact below [`EXACT_BELOW`] ms.
    pub fn percentile(&self, percent: u32) -> Option<u64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = (u128::from(percent) * u128::from(n)).div_ceil(100);
        let rank = u64::try_from(rank).unwrap_or(u64::MAX).clamp(1, n);
        let mut seen = 0u64;
        for (bucket, count) in &self.counts {
            seen = seen.saturating_add(*count);
            if seen >= rank {
                let upper = upper_of(*bucket);
                return Some(self.max_ms.map_or(upper, |max| upper.min(max)));
            }
        }
        self.max_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_128_ms_and_about_3_percent_wide_above() {
        for ms in 0..EXACT_BELOW {
            assert_eq!(lower_of(bucket_of(ms)), ms);
            assert_eq!(upper_of(bucket_of(ms)), ms);
        }
        for ms in [
            128,
            129,
            1000,
            1203,
            65_535,
            3_600_000,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let bucket = bucket_of(ms);
            let (low, high) = (lower_of(bucket), upper_of(bucket));
            assert!(low <= ms && ms <= high, "{ms}: {low}..={high}");
            assert!(
                (high - low) as f64 <= low as f64 / 32.0,
                "{ms}: {low}..={high}"
            );
        }
        // Every time falls in few buckets: the histogram stays small whatever it is fed.
        assert_eq!(u64::from(bucket_of(u64::MAX)), BUCKETS - 1);
        assert_eq!(lower_of(bucket_of(1024)), 1024);
        assert_eq!(upper_of(bucket_of(1024)), 1055);
    }

    #[test]
    fn percentiles_are_nearest_rank_and_exact_for_short_requests() {
        let mut l = Latencies::default();
        assert_eq!(l.percentile(95), None);
        for ms in 1..=20 {
            l.record(ms);
        }
        assert_eq!(l.percentile(50), Some(10));
        assert_eq!(l.percentile(95), Some(19));
        assert_eq!(l.percentile(100), Some(20));
        assert_eq!(l.mean_ms(), Some(10.5));
        assert_eq!(l.count(), 20);
        // Above 128 ms: the bucket's upper end, never above the maximum.
        let mut slow = Latencies::default();
        slow.record(1030);
        assert_eq!(slow.percentile(50), Some(1030));
        slow.record(5000);
        assert_eq!(slow.percentile(50), Some(1055));
        assert_eq!(slow.percentile(95), Some(5000));
    }

    #[test]
    fn merged_histograms_equal_one_fed_everything() {
        let (mut a, mut b, mut all) = (
            Latencies::default(),
            Latencies::default(),
            Latencies::default(),
        );
        for ms in [3, 300, 3000, 30_000] {
            a.record(ms);
            all.record(ms);
        }
        for ms in [5, 500, 7] {
            b.record(ms);
            all.record(ms);
        }
        a.merge(&b);
        assert_eq!(a, all);
        let line = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Latencies>(&line).unwrap(), a);
    }

    /// A timeline's histogram names a million made-up times: read back, it has no more
    /// buckets than times can fall in.
    #[test]
    fn a_hostile_histogram_read_back_stays_bounded() {
        let buckets: Vec<(u64, u64)> = (0..1_000_000u64).map(|i| (i * 7919, u64::MAX)).collect();
        let line = serde_json::json!({"buckets": buckets, "sum_ms": 1, "max_ms": null});
        let l: Latencies = serde_json::from_value(line).unwrap();
        assert!(l.counts.len() < 2048, "{}", l.counts.len());
        assert_eq!(l.count(), u64::MAX);
        assert!(l.percentile(95).is_some());
    }
}
