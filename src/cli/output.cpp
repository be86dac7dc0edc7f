#include "cli/output.h"

#include "core/displaytext.h"
#include "core/duration.h"
#include "core/uuidtext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QUtf8StringView>
#include <QUuid>

#include <algorithm>
#include <cstdlib>

namespace outbox::cli {

QString isoTime(const QDateTime &time) {
    if (!time.isValid())
        return QString();
    return time.toUTC().toString(Qt::ISODateWithMs);
}

QJsonValue jsonTime(const QDateTime &time) {
    if (!time.isValid())
        return QJsonValue::Null;
    return isoTime(time);
}

QString humanDuration(qint64 milliseconds) {
    qint64 ms = std::llabs(milliseconds);
    if (ms < 1000)
        return QString::number(ms) + QStringLiteral("ms");
    if (ms < 10000)
        return QString::number(double(ms) / 1000.0, 'f', 1) + QStringLiteral("s");
    // Precision people care about shrinks as the duration grows.
    qint64 unit = 1000;
    if (ms >= 86400000)
        unit = 3600000;
    else if (ms >= 3600000)
        unit = 60000;
    ms = (ms + unit / 2) / unit * unit;
    return core::formatDuration(core::Millis(ms));
}

QString relativeTime(const QDateTime &time, const QDateTime &now) {
    if (!time.isValid() || !now.isValid())
        return QString();
    const qint64 diff = now.msecsTo(time);
    if (diff == 0)
        return QStringLiteral("now");
    if (diff > 0)
        return QStringLiteral("in ") + humanDuration(diff);
    return humanDuration(diff) + QStringLiteral(" ago");
}

namespace {

// Where the first byte sequence that is not UTF-8 starts.
qsizetype invalidUtf8Offset(const QByteArray &text) {
    qsizetype i = 0;
    while (i < text.size()) {
        qsizetype length = 1;
        while (length <= 4 && i + length <= text.size() &&
               !QUtf8StringView(text.constData() + i, length).isValidUtf8())
            ++length;
        if (length > 4 || i + length > text.size())
            return i;
        i += length;
    }
    return i;
}

// The first \u escape in a string of valid JSON that PostgreSQL cannot
// store: \u0000 (text cannot hold NUL) or half of a surrogate pair (not a
// character). Its offset and what is wrong, or nothing.
std::optional<std::pair<qsizetype, QString>> unstorableEscape(const QByteArray &text) {
    const auto codeAt = [&text](qsizetype at) -> int {
        // `at` is the backslash of a \uXXXX escape.
        if (at + 6 > text.size() || text.at(at + 1) != 'u')
            return -1;
        bool ok = false;
        const int code = text.mid(at + 2, 4).toInt(&ok, 16);
        return ok ? code : -1;
    };
    bool inString = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char c = text.at(i);
        if (!inString) {
            inString = c == '"';
            continue;
        }
        if (c == '"') {
            inString = false;
            continue;
        }
        if (c != '\\')
            continue;
        const int code = codeAt(i);
        if (code == 0)
            return std::pair(i, QStringLiteral("a \\u0000 escape (PostgreSQL cannot store the NUL "
                                               "character; remove it)"));
        if (code >= 0xdc00 && code <= 0xdfff)
            return std::pair(i, QStringLiteral("a \\u%1 escape without the high surrogate "
                                               "before it (half a character; write the whole "
                                               "pair or the character itself)")
                                    .arg(QString::fromLatin1(text.mid(i + 2, 4))));
        if (code >= 0xd800 && code <= 0xdbff) {
            const int low = codeAt(i + 6);
            if (low < 0xdc00 || low > 0xdfff)
                return std::pair(i, QStringLiteral("a \\u%1 escape without the low surrogate "
                                                   "after it (half a character; write the whole "
                                                   "pair or the character itself)")
                                        .arg(QString::fromLatin1(text.mid(i + 2, 4))));
            i += 6; // the low half, checked
        }
        ++i; // the escaped character
    }
    return std::nullopt;
}

} // namespace

std::optional<QJsonValue> parseJsonValue(const QByteArray &text, QString *error) {
    // `quote`: show the text around the offset (not for valid JSON whose
    // values are the problem: they are the payload).
    auto fail = [&](const QString &what, qsizetype offset,
                    bool quote = true) -> std::optional<QJsonValue> {
        if (error) {
            offset = std::clamp<qsizetype>(offset, 0, text.size());
            const qsizetype lineStart = text.lastIndexOf('\n', offset - 1) + 1;
            const qsizetype line = text.left(offset).count('\n') + 1;
            // Qt reports where it gave up, often a little after the
            // mistake: show the text around it too.
            const qsizetype from = std::max<qsizetype>(0, offset - 20);
            const QString near = QString::fromUtf8(text.mid(from, offset + 10 - from)).simplified();
            *error = QStringLiteral("%1 at line %2, column %3 (offset %4)")
                         .arg(what)
                         .arg(line)
                         .arg(offset - lineStart + 1)
                         .arg(offset);
            if (quote && !near.isEmpty())
                *error += QStringLiteral(", near '%1'").arg(near);
        }
        return std::nullopt;
    };
    if (text.trimmed().isEmpty())
        return fail(QStringLiteral("empty input, expected a JSON value"), 0);
    // PostgreSQL text cannot hold a NUL byte, and Qt's parser lets one (and
    // invalid UTF-8) through inside strings.
    if (const qsizetype nul = text.indexOf('\0'); nul >= 0)
        return fail(QStringLiteral("a NUL byte (remove it; JSON writes control characters as "
                                   "\\u escapes, and PostgreSQL refuses \\u0000 too)"),
                    nul);
    if (!QUtf8StringView(text).isValidUtf8())
        return fail(QStringLiteral("bytes that are not valid UTF-8 (save the file as UTF-8)"),
                    invalidUtf8Offset(text));
    // Wrapping in an array lets QJsonDocument validate scalars too; the
    // offsets shift by the one added character.
    QJsonParseError parseError;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray("[") + text + QByteArray("]"), &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(parseError.errorString(), parseError.offset - 1);
    const QJsonArray array = document.array();
    if (array.size() != 1)
        return fail(QStringLiteral("more than one JSON value (separated by a comma)"),
                    text.indexOf(','));
    if (const auto escape = unstorableEscape(text))
        return fail(escape->second, escape->first, false);
    return array.first();
}

namespace {

QJsonValue optionalString(const std::optional<QString> &value) {
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

} // namespace

QJsonValue jsonUuid(const std::optional<QUuid> &id) {
    return id ? QJsonValue(core::uuidText(*id)) : QJsonValue(QJsonValue::Null);
}

void printJsonLine(QTextStream &out, const core::OutboxEvent &event) {
    out << QString::fromUtf8(eventJson(event)) << '\n';
}

QByteArray jsonText(const QJsonObject &object, bool indented) {
    QByteArray text =
        QJsonDocument(object).toJson(indented ? QJsonDocument::Indented : QJsonDocument::Compact);
    if (text.endsWith('\n'))
        text.chop(1);
    return core::escapeJsonControls(text);
}

QByteArray eventJson(const core::OutboxEvent &event, bool indented) {
    // The payload is spliced in as text: going through QJsonValue would turn
    // large integers into doubles and change what the operator sees.
    const QString marker = QStringLiteral("outbox-payload-") + core::uuidText(QUuid::createUuid());
    QJsonObject object{
        {QStringLiteral("id"), core::uuidText(event.id)},
        {QStringLiteral("namespace"), event.nameSpace},
        {QStringLiteral("topic"), event.topic},
        {QStringLiteral("aggregate_type"), optionalString(event.aggregateType)},
        {QStringLiteral("aggregate_id"), optionalString(event.aggregateId)},
        {QStringLiteral("tenant_id"), jsonUuid(event.tenantId)},
        {QStringLiteral("dedupe_key"), optionalString(event.dedupeKey)},
        {QStringLiteral("payload"), marker},
        {QStringLiteral("status"), core::statusName(event.status)},
        {QStringLiteral("attempts"), event.attempts},
        {QStringLiteral("next_attempt_at"), jsonTime(event.nextAttemptAt)},
        {QStringLiteral("locked_by"), jsonUuid(event.lockedBy)},
        {QStringLiteral("locked_until"), jsonTime(event.lockedUntil)},
        {QStringLiteral("last_error"), optionalString(event.lastError)},
        {QStringLiteral("delivered_at"), jsonTime(event.deliveredAt)},
        {QStringLiteral("created_at"), jsonTime(event.createdAt)},
        {QStringLiteral("updated_at"), jsonTime(event.updatedAt)},
        {QStringLiteral("replay_of"), jsonUuid(event.replayOf)},
        {QStringLiteral("max_attempts"),
         event.maxAttempts ? QJsonValue(*event.maxAttempts) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("traceparent"), optionalString(event.traceparent)},
        {QStringLiteral("tracestate"), optionalString(event.tracestate)},
    };
    QByteArray text = jsonText(object, indented);
    QByteArray payload;
    if (event.payload.trimmed().isEmpty()) {
        payload = QByteArrayLiteral("null");
    } else if (indented) {
        // QJsonDocument indents members by 4 spaces.
        payload = reformatJson(event.payload, 4)
                      .replace(QLatin1Char('\n'), QStringLiteral("\n    "))
                      .toUtf8();
    } else {
        payload = reformatJson(event.payload, -1).toUtf8();
    }
    const QByteArray quotedMarker = '"' + marker.toUtf8() + '"';
    const qsizetype at = text.indexOf(quotedMarker);
    if (at >= 0)
        text.replace(at, quotedMarker.size(), core::escapeJsonControls(payload));
    return text;
}

// --- Table -------------------------------------------------------------------

Table::Table(QStringList headers)
    : m_headers(std::move(headers)) {}

void Table::addRow(QStringList cells) {
    for (QString &cell : cells)
        cell = core::escapeControls(cell);
    while (cells.size() < m_headers.size())
        cells.append(QString());
    m_rows.append(std::move(cells));
}

void Table::print(QTextStream &stream) const {
    QList<qsizetype> widths;
    for (const QString &header : m_headers)
        widths.append(header.size());
    for (const QStringList &row : m_rows) {
        for (qsizetype i = 0; i < widths.size(); ++i)
            widths[i] = std::max(widths[i], row.at(i).size());
    }
    auto printRow = [&](const QStringList &cells) {
        QString line;
        for (qsizetype i = 0; i < widths.size(); ++i) {
            const bool last = i + 1 == widths.size();
            const bool right = m_right.contains(int(i));
            if (i > 0)
                line += QStringLiteral("  ");
            if (right)
                line += cells.at(i).rightJustified(widths[i]);
            else if (last)
                line += cells.at(i);
            else
                line += cells.at(i).leftJustified(widths[i]);
        }
        while (line.endsWith(QLatin1Char(' ')))
            line.chop(1);
        stream << line << '\n';
    };
    printRow(m_headers);
    for (const QStringList &row : m_rows)
        printRow(row);
}

QString elide(const QString &text, int width) {
    QString folded = text.simplified();
    if (folded.size() <= width)
        return folded;
    return folded.left(std::max(0, width - 3)) + QStringLiteral("...");
}

} // namespace outbox::cli
