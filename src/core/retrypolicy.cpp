#include "core/retrypolicy.h"

#include <QDateTime>
#include <QRegularExpression>
#include <QTimeZone>

#include <algorithm>
#include <limits>

namespace outbox::core {

Millis RetryPolicy::cappedDelay(int attempts) const {
    const qint64 base = std::max<qint64>(baseDelay.count(), 0);
    const qint64 cap = std::max<qint64>(maxDelay.count(), 0);
    if (base == 0 || cap == 0)
        return Millis(0);
    if (base >= cap)
        return Millis(cap);
    // The shift is checked against the cap before it is done, so neither a
    // huge attempt count nor a huge base can overflow.
    const int shift = std::max(attempts, 1) - 1;
    if (shift >= 63 || base > (cap >> shift))
        return Millis(cap);
    return Millis(std::min(base << shift, cap));
}

Millis RetryPolicy::nextDelay(int attempts, QRandomGenerator &rng,
                              std::optional<Millis> retryAfter) const {
    const qint64 delay = cappedDelay(attempts).count();
    const qint64 low = delay / 2;
    // Equal jitter: uniform over [delay/2, delay], both ends included. The
    // span is at most 2^62 + 1, so it cannot overflow.
    qint64 result = low + qint64(rng.bounded(quint64(delay - low) + 1));
    if (retryAfter && retryAfter->count() > result)
        result = std::min<qint64>(retryAfter->count(), std::max<qint64>(maxDelay.count(), 0));
    return Millis(result);
}

namespace {

int monthNumber(QStringView name) {
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; ++i) {
        if (name == QLatin1String(months[i]))
            return i + 1;
    }
    return 0;
}

// The three date forms HTTP recipients must accept (RFC 9110 §5.6.7):
// IMF-fixdate, the obsolete RFC 850 form and asctime().
QDateTime parseHttpDate(const QString &text, const QDateTime &now) {
    struct Form {
        QRegularExpression pattern;
        // The capture groups of day, month name, year, hour, minute, second.
        int day, month, year, hour, minute, second;
        bool twoDigitYear;
    };
    static const Form forms[] = {
        {QRegularExpression(QStringLiteral(
             R"(^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$)")),
         1, 2, 3, 4, 5, 6, false},
        {QRegularExpression(QStringLiteral(
             R"(^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$)")),
         1, 2, 3, 4, 5, 6, true},
        {QRegularExpression(QStringLiteral(
             R"(^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$)")),
         2, 1, 6, 3, 4, 5, false},
    };

    for (const Form &form : forms) {
        const QRegularExpressionMatch m = form.pattern.match(text);
        if (!m.hasMatch())
            continue;
        const auto number = [&m](int group) { return m.capturedView(group).trimmed().toInt(); };
        int year = number(form.year);
        if (form.twoDigitYear) {
            // A two-digit year more than 50 years ahead is in the past century.
            const int nowYear = now.toUTC().date().year();
            year += nowYear - nowYear % 100;
            if (year > nowYear + 50)
                year -= 100;
        }
        const int month = monthNumber(m.capturedView(form.month));
        const QDate date(year, month, number(form.day));
        const QTime time(number(form.hour), number(form.minute), number(form.second));
        if (month == 0 || !date.isValid() || !time.isValid())
            return QDateTime();
        return QDateTime(date, time, QTimeZone::utc());
    }
    return QDateTime();
}

} // namespace

std::optional<Millis> parseRetryAfter(QByteArrayView value, const QDateTime &now) {
    const QString text = QString::fromLatin1(value.trimmed());
    if (text.isEmpty())
        return std::nullopt;

    const bool allDigits = std::all_of(text.begin(), text.end(), [](QChar c) {
        return c >= QLatin1Char('0') && c <= QLatin1Char('9');
    });
    if (allDigits) {
        // A value too large to represent is still a valid "much later": it
        // saturates, and the policy's cap brings it back to earth.
        constexpr qint64 limit = std::numeric_limits<qint64>::max() / 1000;
        qint64 seconds = 0;
        for (QChar c : text) {
            seconds = seconds * 10 + (c.unicode() - u'0');
            if (seconds > limit)
                return Millis(std::numeric_limits<qint64>::max());
        }
        return Millis(seconds * 1000);
    }

    const QDateTime when = parseHttpDate(text, now);
    if (!when.isValid() || !now.isValid())
        return std::nullopt;
    const qint64 delta = now.msecsTo(when);
    if (delta < 0)
        return std::nullopt;
    return Millis(delta);
}

} // namespace outbox::core
