#include "core/duration.h"

#include <array>
#include <limits>
#include <numeric>

namespace outbox::core {

namespace {

struct Unit {
    QLatin1String name;
    qint64 ms;
};

// Largest first: components of a combined duration must follow this order.
constexpr std::array<Unit, 5> kUnits{{
    {QLatin1String("d"), 86400000},
    {QLatin1String("h"), 3600000},
    {QLatin1String("m"), 60000},
    {QLatin1String("s"), 1000},
    {QLatin1String("ms"), 1},
}};

constexpr qint64 kMax = std::numeric_limits<qint64>::max();

Result<Millis> invalid(QStringView text, const QString &reason) {
    QString message = QStringLiteral("invalid duration \"") % text % QStringLiteral("\": ");
    if (!reason.isEmpty())
        message += reason % QStringLiteral("; ");
    message += QStringLiteral("use a number with a unit: 500ms, 30s, 5m, 2h, 7d");
    return Result<Millis>::failure(ErrorKind::Invalid, message);
}

bool isDigit(QChar c) {
    return c >= QLatin1Char('0') && c <= QLatin1Char('9');
}

bool isUnitLetter(QChar c) {
    return c >= QLatin1Char('a') && c <= QLatin1Char('z');
}

} // namespace

Result<Millis> parseDuration(QStringView text) {
    const QStringView s = text.trimmed();
    if (s.isEmpty())
        return invalid(text, QStringLiteral("it is empty"));
    if (s.startsWith(QLatin1Char('-')))
        return invalid(text, QStringLiteral("negative durations are not allowed"));

    qint64 total = 0;
    qsizetype previousUnit = -1;
    qsizetype i = 0;
    while (i < s.size()) {
        // Number: digits with an optional fraction ("1.5s" is what
        // formatDuration writes, so it must read back).
        const qsizetype intStart = i;
        while (i < s.size() && isDigit(s[i]))
            ++i;
        const QStringView intPart = s.mid(intStart, i - intStart);
        QStringView fracPart;
        if (i < s.size() && s[i] == QLatin1Char('.')) {
            ++i;
            const qsizetype fracStart = i;
            while (i < s.size() && isDigit(s[i]))
                ++i;
            fracPart = s.mid(fracStart, i - fracStart);
            if (fracPart.isEmpty())
                return invalid(text, QStringLiteral("a decimal point must be followed by digits"));
        }
        if (intPart.isEmpty() && fracPart.isEmpty()) {
            if (i < s.size() && isUnitLetter(s[i]))
                return invalid(text, QStringLiteral("a unit needs a number before it"));
            return invalid(text,
                           QStringLiteral("unexpected \"") % s.mid(i, 1) % QStringLiteral("\""));
        }

        const qsizetype unitStart = i;
        while (i < s.size() && isUnitLetter(s[i]))
            ++i;
        const QStringView unitText = s.mid(unitStart, i - unitStart);
        if (unitText.isEmpty()) {
            if (i == s.size())
                return invalid(text, QStringLiteral("the unit is missing"));
            return invalid(text,
                           QStringLiteral("unexpected \"") % s.mid(i, 1) % QStringLiteral("\""));
        }
        qsizetype unitIndex = -1;
        for (qsizetype u = 0; u < qsizetype(kUnits.size()); ++u) {
            if (unitText == kUnits[size_t(u)].name)
                unitIndex = u;
        }
        if (unitIndex < 0)
            return invalid(text,
                           QStringLiteral("unknown unit \"") % unitText % QStringLiteral("\""));
        if (unitIndex <= previousUnit)
            return invalid(text,
                           QStringLiteral("write each unit once, largest first (e.g. 1h30m)"));
        previousUnit = unitIndex;
        const qint64 unitMs = kUnits[size_t(unitIndex)].ms;

        // Integer part, overflow-checked digit by digit.
        qint64 whole = 0;
        for (QChar c : intPart) {
            if (__builtin_mul_overflow(whole, qint64(10), &whole) ||
                __builtin_add_overflow(whole, qint64(c.unicode() - u'0'), &whole))
                return invalid(text, QStringLiteral("the value is too large"));
        }
        qint64 value = 0;
        if (__builtin_mul_overflow(whole, unitMs, &value))
            return invalid(text, QStringLiteral("the value is too large"));

        // Fraction: must land on a whole millisecond, computed exactly with a
        // reduced fraction so that no precision is lost to floating point.
        while (fracPart.endsWith(QLatin1Char('0')))
            fracPart.chop(1);
        if (!fracPart.isEmpty()) {
            if (fracPart.size() > 18)
                return invalid(text, QStringLiteral("the smallest step is 1ms"));
            qint64 numerator = 0;
            qint64 denominator = 1;
            for (QChar c : fracPart) {
                numerator = numerator * 10 + (c.unicode() - u'0');
                denominator *= 10;
            }
            const qint64 g = std::gcd(unitMs, denominator);
            const qint64 reducedDenominator = denominator / g;
            if (numerator % reducedDenominator != 0)
                return invalid(text, QStringLiteral("the smallest step is 1ms"));
            const qint64 fracMs = (numerator / reducedDenominator) * (unitMs / g);
            if (__builtin_add_overflow(value, fracMs, &value))
                return invalid(text, QStringLiteral("the value is too large"));
        }

        if (__builtin_add_overflow(total, value, &total))
            return invalid(text, QStringLiteral("the value is too large"));
    }
    return Millis(total);
}

Result<void> checkLongestSetting(QStringView flag, Millis value) {
    if (value <= kLongestSetting)
        return {};
    return Result<void>::failure(ErrorKind::Invalid,
                                 flag % QStringLiteral(" (") % formatDuration(value) %
                                     QStringLiteral(") is longer than the longest supported "
                                                    "duration (") %
                                     formatDuration(kLongestSetting) %
                                     QStringLiteral("); give a shorter value"));
}

QString formatDuration(Millis duration) {
    qint64 ms = duration.count();
    if (ms == 0)
        return QStringLiteral("0s");
    QString out;
    // Work on the magnitude as unsigned so that the most negative value does
    // not overflow when negated.
    quint64 rest = ms < 0 ? quint64(0) - quint64(ms) : quint64(ms);
    if (ms < 0)
        out += QLatin1Char('-');
    const quint64 days = rest / 86400000U;
    rest %= 86400000U;
    const quint64 hours = rest / 3600000U;
    rest %= 3600000U;
    const quint64 minutes = rest / 60000U;
    rest %= 60000U;
    const quint64 seconds = rest / 1000U;
    const quint64 millis = rest % 1000U;

    if (days)
        out += QString::number(days) % QLatin1Char('d');
    if (hours)
        out += QString::number(hours) % QLatin1Char('h');
    if (minutes)
        out += QString::number(minutes) % QLatin1Char('m');
    if (seconds) {
        out += QString::number(seconds);
        if (millis) {
            QString fraction = QString::number(millis).rightJustified(3, QLatin1Char('0'));
            while (fraction.endsWith(QLatin1Char('0')))
                fraction.chop(1);
            out += QLatin1Char('.') % fraction;
        }
        out += QLatin1Char('s');
    } else if (millis) {
        out += QString::number(millis) % QLatin1String("ms");
    }
    return out;
}

} // namespace outbox::core
