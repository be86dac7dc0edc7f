#pragma once

#include <QtGlobal>

#include <array>

namespace outbox::dispatch {

// A latency histogram with fixed memory (about 2.5 KB) and log-linear buckets:
// values below 16 are exact, above that every power of two is split into 8
// buckets, so a percentile is off by at most 12.5%. Values are microseconds
// by convention (the dispatcher records microseconds). A plain value type:
// cheap to copy into a stats snapshot, not thread-safe.
class Histogram final {
public:
    static constexpr int SubBuckets = 8;
    static constexpr int MaxExponent = 44; // values saturate at 2^44 us (about 200 days)
    static constexpr int BucketCount = 16 + (MaxExponent - 4) * SubBuckets;

    void record(qint64 value);
    void merge(const Histogram &other);
    void reset();

    qint64 count() const { return m_count; }
    qint64 sum() const { return m_sum; }
    qint64 min() const { return m_count ? m_min : 0; }
    qint64 max() const { return m_max; }
    double mean() const { return m_count ? double(m_sum) / double(m_count) : 0.0; }

    // The smallest recorded-bucket bound with at least `quantile` (0..1) of the
    // values at or below it; clamped to [min(), max()]. 0 when empty.
    qint64 percentile(double quantile) const;
    qint64 p50() const { return percentile(0.50); }
    qint64 p90() const { return percentile(0.90); }
    qint64 p99() const { return percentile(0.99); }

    // How many values are <= bound (exact at bucket edges, otherwise counts
    // the buckets whose upper edge is <= bound). For Prometheus buckets.
    qint64 countAtOrBelow(qint64 bound) const;

    static int bucketIndex(qint64 value);
    static qint64 bucketLowerBound(int index);
    static qint64 bucketUpperBound(int index); // inclusive

private:
    std::array<qint64, BucketCount> m_buckets{};
    qint64 m_count = 0;
    qint64 m_sum = 0;
    qint64 m_min = 0;
    qint64 m_max = 0;
};

} // namespace outbox::dispatch
