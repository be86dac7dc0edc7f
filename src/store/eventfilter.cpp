#include "store/eventfilter.h"

#include "core/uuidtext.h"
#include "store/aggregateorder.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QRegularExpression>
#include <QStringList>

#include <algorithm>

namespace outbox::store {

namespace {

// The error-signature rules, applied in order. The same pattern and
// replacement strings are used by QRegularExpression (PCRE2) and by
// PostgreSQL's regexp_replace (ARE), so they keep to the subset where both
// engines agree: explicit ASCII classes instead of \d \s \w \b (whose meaning
// depends on Unicode mode and locale), no alternation (PCRE takes the first
// alternative, PostgreSQL the longest match), and every pattern has exactly
// one possible match at a given start position, so leftmost-first and
// leftmost-longest pick the same text. Token boundaries are a consumed
// non-word character (given back with \1) plus a negative lookahead; a space
// is prepended first so that a token at the very start has a boundary too.
struct Rule {
    const char *pattern;
    const char *replacement;
};

constexpr Rule kRules[] = {
    // Single-quoted values ('abc 12', SQL literals) are folded, but only where
    // the quote does not end a word (so the apostrophe in "can't" does not
    // start a quote). Double-quoted text keeps its words: it is mostly JSON
    // ({"error":"deadlock detected"}) or a name, and its numbers and ids are
    // folded by the rules below like anywhere else.
    {R"(([^0-9A-Za-z_])'[^'\n]*')", R"(\1'?')"},
    {R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})", "<uuid>"},
    // Hex numbers: 0x..., byte runs (ab:cd:ef:01, fingerprints and serials),
    // and hex tokens (trace ids, hashes, OpenSSL codes such as 0A000086): 6+
    // hex digits with at least one digit and one letter, so that plain words
    // ("deadbeef") and plain numbers stay apart; plain numbers are the next
    // rule's job. An underscore bounds them (req_4bf92f35...).
    {R"(([^0-9A-Za-z])0[xX][0-9a-fA-F]+(?![0-9A-Za-z]))", R"(\1<hex>)"},
    {R"(([^0-9A-Za-z])[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){3,}(?![0-9A-Za-z]))", R"(\1<hex>)"},
    {R"(([^0-9A-Za-z])(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{6,}(?![0-9A-Za-z]))",
     R"(\1<hex>)"},
    // Numbers, decimals and dotted runs such as IPv4 addresses and versions;
    // not an HTTP status ("HTTP 410" is permanent, "HTTP 503" transient:
    // they are different errors). A run is taken whole from its first digit.
    {R"((?<!HTTP )(?<![0-9])[0-9]+(?:\.[0-9]+)*)", "<n>"},
    {"[ \\t\\n\\r\\f]+", " "},
};

// A PostgreSQL E'' literal: independent of standard_conforming_strings.
QString sqlEscapedLiteral(const QString &text) {
    QString escaped = text;
    escaped.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    escaped.replace(QLatin1Char('\''), QLatin1String("''"));
    return QLatin1String("E'") + escaped + QLatin1Char('\'');
}

QString likeEscaped(const QString &text) {
    QString escaped = text;
    escaped.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    escaped.replace(QLatin1Char('%'), QLatin1String("\\%"));
    escaped.replace(QLatin1Char('_'), QLatin1String("\\_"));
    return escaped;
}

QString containsPattern(const QString &text) {
    return QLatin1Char('%') + likeEscaped(text) + QLatin1Char('%');
}

// Values in describe(): bare when they are a simple token, else quoted.
bool isPlain(QChar c) {
    return c.isLetterOrNumber() || c == QLatin1Char('.') || c == QLatin1Char('-') ||
           c == QLatin1Char('_') || c == QLatin1Char('/') || c == QLatin1Char(':');
}

QString shown(const QString &value) {
    if (!value.isEmpty() && std::all_of(value.begin(), value.end(), isPlain))
        return value;
    QString escaped = value;
    escaped.replace(QLatin1Char('\''), QLatin1String("''"));
    return QLatin1Char('\'') + escaped + QLatin1Char('\'');
}

QString quotedAlways(const QString &value) {
    QString escaped = value;
    escaped.replace(QLatin1Char('\''), QLatin1String("''"));
    return QLatin1Char('\'') + escaped + QLatin1Char('\'');
}

QString shownTime(const QDateTime &time) {
    const QDateTime utc = time.toUTC();
    return utc.toString(utc.time().msec() == 0 ? Qt::ISODate : Qt::ISODateWithMs);
}

QString keyOf(const EventFilter &filter) {
    // The structured binding names every member: it stops compiling when a
    // field is added, until the field is written below as well.
    const auto &[status, retrying, nameSpace, topic, tenantId, dedupeKey, ids, errorContains,
                 signature, text, createdFrom, createdTo, olderThan, payloadContains,
                 aggregateBlocked, traceId] = filter;
    QStringList parts;
    parts << (status ? core::statusName(*status) : QString())
          << (retrying ? QString::number(int(*retrying)) : QString()) << nameSpace << topic
          << (tenantId ? tenantId->toString() : QString()) << dedupeKey << errorContains
          << signature
          << text
          // In UTC: QDateTime compares instants, so must the key.
          << createdFrom.toUTC().toString(Qt::ISODateWithMs)
          << createdTo.toUTC().toString(Qt::ISODateWithMs)
          << (olderThan ? QString::number(olderThan->count()) : QString()) << payloadContains
          << (aggregateBlocked ? QStringLiteral("blocked") : QString()) << traceId;
    for (const QUuid &id : ids) {
        parts << id.toString();
    }
    // Escaped, so that no field's text can pass for a separator.
    for (QString &part : parts) {
        part.replace(QLatin1Char('\\'), QLatin1String("\\\\"))
            .replace(QLatin1Char('|'), QLatin1String("\\|"));
    }
    return parts.join(QLatin1Char('|'));
}

} // namespace

bool EventFilter::isEmpty() const {
    return *this == EventFilter{};
}

bool EventFilter::needsScan() const {
    // Blocked events are found by a look at the aggregate of every pending one.
    if (!errorContains.isEmpty() || !errorSignature.isEmpty() || !text.isEmpty() ||
        aggregateBlocked)
        return true;
    // "Retrying" is pending; the payload index holds pending and dead events.
    const bool indexedStatus =
        retrying || status == core::Status::Pending || status == core::Status::Dead;
    return !payloadContains.isEmpty() && !indexedStatus;
}

QString EventFilter::key() const {
    return keyOf(*this);
}

QString EventFilter::describe() const {
    QStringList parts;
    if (status)
        parts << QLatin1String("status=") + core::statusName(*status);
    if (retrying)
        parts << (*retrying ? QStringLiteral("retrying") : QStringLiteral("first-attempt"));
    if (!nameSpace.isEmpty())
        parts << QLatin1String("namespace=") + shown(nameSpace);
    if (!topic.isEmpty())
        parts << QLatin1String("topic=") + shown(topic);
    if (tenantId)
        parts << QLatin1String("tenant=") + core::uuidText(*tenantId);
    if (!dedupeKey.isEmpty())
        parts << QLatin1String("dedupe_key=") + shown(dedupeKey);
    if (!ids.isEmpty()) {
        // The audit keeps every touched id in outbox_audit_events; the text
        // only has to stay readable.
        constexpr qsizetype shownIds = 3;
        QStringList listed;
        for (qsizetype i = 0; i < ids.size() && i < shownIds; ++i)
            listed << core::uuidText(ids.at(i));
        QString idList = QLatin1String("ids=") + listed.join(QLatin1Char(','));
        if (ids.size() > shownIds)
            idList += QStringLiteral(" (+%1 more)").arg(ids.size() - shownIds);
        parts << idList;
    }
    if (!errorContains.isEmpty())
        parts << QLatin1String("error~") + quotedAlways(errorContains);
    if (!errorSignature.isEmpty())
        parts << QLatin1String("signature=") + quotedAlways(errorSignature);
    if (!text.isEmpty())
        parts << QLatin1String("text~") + quotedAlways(text);
    if (createdFrom.isValid())
        parts << QLatin1String("created>=") + shownTime(createdFrom);
    if (createdTo.isValid())
        parts << QLatin1String("created<") + shownTime(createdTo);
    if (olderThan)
        parts << QLatin1String("older than ") + core::formatDuration(*olderThan);
    if (!payloadContains.isEmpty())
        parts << QLatin1String("payload@>") + quotedAlways(payloadContains);
    if (aggregateBlocked)
        parts << QStringLiteral("blocked by its aggregate");
    if (!traceId.isEmpty())
        parts << QLatin1String("trace=") + shown(traceId);
    if (parts.isEmpty())
        return QStringLiteral("all events");
    return parts.join(QLatin1Char(' '));
}

SqlCondition toSqlCondition(const EventFilter &filter, const QString &alias) {
    const QString prefix = alias.isEmpty() ? QString() : alias + QLatin1Char('.');
    const auto col = [&prefix](const char *name) -> QString {
        return prefix + QLatin1String(name);
    };

    QStringList conditions;
    QVariantList values;
    if (filter.status) {
        conditions << col("status") + QLatin1String(" = ?");
        values << core::statusName(*filter.status);
    }
    if (filter.retrying) {
        // "Retrying" is a kind of pending row: with another status the filter
        // matches nothing, which is what the contradiction asks for.
        conditions << col("status") + QLatin1String(" = 'pending' AND ") + col("attempts") +
                          (*filter.retrying ? QLatin1String(" > 0") : QLatin1String(" = 0"));
    }
    if (!filter.nameSpace.isEmpty()) {
        conditions << col("namespace") + QLatin1String(" = ?");
        values << filter.nameSpace;
    }
    if (!filter.topic.isEmpty()) {
        conditions << col("topic") + QLatin1String(" = ?");
        values << filter.topic;
    }
    if (filter.tenantId) {
        conditions << col("tenant_id") + QLatin1String(" = ?::uuid");
        values << core::uuidText(*filter.tenantId);
    }
    if (!filter.dedupeKey.isEmpty()) {
        conditions << col("dedupe_key") + QLatin1String(" = ?");
        values << filter.dedupeKey;
    }
    if (!filter.ids.isEmpty()) {
        // Formatted uuids contain only hex digits and dashes: safe inside an
        // array literal, and one bound value however long the selection.
        QStringList texts;
        texts.reserve(filter.ids.size());
        for (const QUuid &id : filter.ids)
            texts << core::uuidText(id);
        conditions << col("id") + QLatin1String(" = ANY(?::uuid[])");
        values << QString(QLatin1Char('{') + texts.join(QLatin1Char(',')) + QLatin1Char('}'));
    }
    if (!filter.errorContains.isEmpty()) {
        conditions << col("last_error") + QLatin1String(" ILIKE ? ESCAPE E'\\\\'");
        values << containsPattern(filter.errorContains);
    }
    if (!filter.errorSignature.isEmpty()) {
        conditions << errorSignatureSql(col("last_error")) + QLatin1String(" = ?");
        values << filter.errorSignature;
    }
    if (!filter.text.isEmpty()) {
        // Ids are shown (and pasted) in lower case, with or without braces.
        QString idPrefix = filter.text.trimmed().toLower();
        if (idPrefix.startsWith(QLatin1Char('{')))
            idPrefix.remove(0, 1);
        if (idPrefix.endsWith(QLatin1Char('}')))
            idPrefix.chop(1);
        conditions << QLatin1Char('(') + col("id") + QLatin1String("::text LIKE ? ESCAPE E'\\\\'") +
                          QLatin1String(" OR ") + col("dedupe_key") +
                          QLatin1String(" ILIKE ? ESCAPE E'\\\\'") + QLatin1String(" OR ") +
                          col("topic") + QLatin1String(" ILIKE ? ESCAPE E'\\\\'") +
                          QLatin1String(" OR ") + col("last_error") +
                          QLatin1String(" ILIKE ? ESCAPE E'\\\\')");
        const QString pattern = containsPattern(filter.text);
        values << QString(likeEscaped(idPrefix) + QLatin1Char('%')) << pattern << pattern
               << pattern;
    }
    if (filter.createdFrom.isValid()) {
        conditions << col("created_at") + QLatin1String(" >= ?");
        values << filter.createdFrom;
    }
    if (filter.createdTo.isValid()) {
        conditions << col("created_at") + QLatin1String(" < ?");
        values << filter.createdTo;
    }
    if (filter.olderThan) {
        conditions << col("updated_at") +
                          QLatin1String(" < now() - ?::bigint * interval '1 millisecond'");
        values << qint64(filter.olderThan->count());
    }
    if (!filter.payloadContains.isEmpty()) {
        // An operator the payload index (jsonb_path_ops) answers; the text is
        // sent as it was typed: JSON numbers of any size stay exact.
        conditions << col("payload") + QLatin1String(" @> ?::jsonb");
        values << filter.payloadContains;
    }
    if (!filter.traceId.isEmpty()) {
        // The expression of outbox_events_trace_idx (sql/014), and its
        // predicate spelled out so the planner sees the index applies.
        conditions << QLatin1String("substr(") + col("traceparent") +
                          QLatin1String(", 4, 32) = ? AND ") + col("traceparent") +
                          QLatin1String(" IS NOT NULL");
        values << normalizedTraceId(filter.traceId);
    }
    if (filter.aggregateBlocked) {
        // The ordered claim's test (OutboxStore::Statement::Claim), one probe
        // of outbox_events_aggregate_idx per pending event. The outer row's
        // columns are always qualified: bare, they would name b's.
        const QString outer = prefix.isEmpty() ? QStringLiteral("outbox_events.") : prefix;
        const auto outerCol = [&outer](const char *name) -> QString {
            return outer + QLatin1String(name);
        };
        // Nothing is blocked while aggregate order is off (and without its
        // index each probe would read the table): a test made once.
        conditions << QLatin1String("outbox_aggregate_order_on() AND ") + outerCol("status") +
                          QLatin1String(" = 'pending' AND EXISTS (SELECT 1 FROM") +
                          QLatin1String(" outbox_events b WHERE b.aggregate_type = ") +
                          outerCol("aggregate_type") + QLatin1String(" AND b.aggregate_id = ") +
                          outerCol("aggregate_id") +
                          QLatin1String(" AND b.status IN ('pending', 'processing', 'dead')"
                                        " AND ") +
                          aggregateOrderBefore(QStringLiteral("b"), outer.chopped(1)) +
                          QLatin1String(")");
    }
    if (conditions.isEmpty())
        return {QStringLiteral("TRUE"), {}};
    return {QLatin1Char('(') + conditions.join(QLatin1String(") AND (")) + QLatin1Char(')'),
            values};
}

QString errorSignature(const QString &error) {
    QString signature = QLatin1Char(' ') + error;
    for (const Rule &rule : kRules) {
        const QRegularExpression re(QLatin1String(rule.pattern));
        signature.replace(re, QLatin1String(rule.replacement));
    }
    // Only U+0020: QString::trimmed() would also drop Unicode spaces that the
    // SQL side's btrim(x, ' ') keeps.
    qsizetype begin = 0;
    qsizetype end = signature.size();
    while (begin < end && signature.at(begin) == QLatin1Char(' '))
        ++begin;
    while (end > begin && signature.at(end - 1) == QLatin1Char(' '))
        --end;
    return signature.mid(begin, end - begin);
}

QString payloadFilterProblem(const QString &text) {
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty())
        return {};
    const QString example = QStringLiteral("{\"invoice_id\": 42}");
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(trimmed.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError) {
        const bool scalar =
            !trimmed.startsWith(QLatin1Char('{')) && !trimmed.startsWith(QLatin1Char('['));
        if (scalar)
            return QStringLiteral("the payload filter must be a JSON object or array, e.g. %1: "
                                  "name the key whose value you look for")
                .arg(example);
        return QStringLiteral("the payload filter is not valid JSON (%1 at character %2); write "
                              "a JSON object with keys and strings in double quotes, e.g. %3")
            .arg(error.errorString())
            .arg(error.offset + 1)
            .arg(example);
    }
    if (!document.isObject() && !document.isArray())
        return QStringLiteral("the payload filter must be a JSON object or array, e.g. %1")
            .arg(example);
    return {};
}

QString normalizedTraceId(const QString &text) {
    return text.trimmed().toLower();
}

QString traceIdProblem(const QString &text) {
    const QString id = normalizedTraceId(text);
    if (id.isEmpty())
        return {};
    static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{32}$"));
    if (!hex.match(id).hasMatch())
        return QStringLiteral("'%1' is not a trace id: give the 32 hex digits of the trace id, "
                              "e.g. 4bf92f3577b34da6a3ce929d0e0e4736 (the second part of a "
                              "traceparent)")
            .arg(text.left(100));
    if (id == QString(32, QLatin1Char('0')))
        return QStringLiteral("the trace id must not be all zeros (W3C: an invalid trace id)");
    return {};
}

QString errorSignatureSql(const QString &column) {
    QString sql = QLatin1String("(' ' || ") + column + QLatin1Char(')');
    for (const Rule &rule : kRules) {
        sql = QLatin1String("regexp_replace(") + sql + QLatin1String(", ") +
              sqlEscapedLiteral(QLatin1String(rule.pattern)) + QLatin1String(", ") +
              sqlEscapedLiteral(QLatin1String(rule.replacement)) + QLatin1String(", 'g')");
    }
    return QLatin1String("btrim(") + sql + QLatin1String(", ' ')");
}

} // namespace outbox::store
