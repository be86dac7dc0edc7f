#include "dispatch/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace outbox::dispatch {

int Histogram::bucketIndex(qint64 value) {
    if (value < 16)
        return value < 0 ? 0 : int(value);
    const int exponent = 63 - std::countl_zero(quint64(value));
    if (exponent >= MaxExponent)
        return BucketCount - 1;
    const int sub = int((value >> (exponent - 3)) & (SubBuckets - 1));
    return 16 + (exponent - 4) * SubBuckets + sub;
}

qint64 Histogram::bucketLowerBound(int index) {
    if (index < 16)
        return index;
    const int k = index - 16;
    const int exponent = 4 + k / SubBuckets;
    const int sub = k % SubBuckets;
    return qint64(SubBuckets + sub) << (exponent - 3);
}

qint64 Histogram::bucketUpperBound(int index) {
    if (index < 16)
        return index;
    const int exponent = 4 + (index - 16) / SubBuckets;
    return bucketLowerBound(index) + (qint64(1) << (exponent - 3)) - 1;
}

void Histogram::record(qint64 value) {
    value = std::max<qint64>(value, 0);
    ++m_buckets[size_t(bucketIndex(value))];
    m_min = m_count == 0 ? value : std::min(m_min, value);
    m_max = std::max(m_max, value);
    // Saturate instead of overflowing: a sum this large is meaningless anyway.
    m_sum = value > std::numeric_limits<qint64>::max() - m_sum ? std::numeric_limits<qint64>::max()
                                                               : m_sum + value;
    ++m_count;
}

void Histogram::merge(const Histogram &other) {
    if (other.m_count == 0)
        return;
    for (size_t i = 0; i < m_buckets.size(); ++i)
        m_buckets[i] += other.m_buckets[i];
    m_min = m_count == 0 ? other.m_min : std::min(m_min, other.m_min);
    m_max = std::max(m_max, other.m_max);
    m_sum = other.m_sum > std::numeric_limits<qint64>::max() - m_sum
                ? std::numeric_limits<qint64>::max()
                : m_sum + other.m_sum;
    m_count += other.m_count;
}

void Histogram::reset() {
    *this = Histogram();
}

qint64 Histogram::percentile(double quantile) const {
    if (m_count == 0)
        return 0;
    quantile = std::clamp(quantile, 0.0, 1.0);
    const auto rank = std::clamp<qint64>(qint64(std::ceil(quantile * double(m_count))), 1, m_count);
    qint64 seen = 0;
    for (int i = 0; i < BucketCount; ++i) {
        seen += m_buckets[size_t(i)];
        if (seen >= rank) {
            if (i == BucketCount - 1)
                return m_max; // the last bucket is open-ended
            return std::clamp(bucketUpperBound(i), m_min, m_max);
        }
    }
    return m_max;
}

qint64 Histogram::countAtOrBelow(qint64 bound) const {
    if (bound >= m_max)
        return m_count;
    qint64 total = 0;
    for (int i = 0; i < BucketCount && bucketUpperBound(i) <= bound; ++i)
        total += m_buckets[size_t(i)];
    return total;
}

} // namespace outbox::dispatch
