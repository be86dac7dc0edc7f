#pragma once

#include "core/duration.h"
#include "core/status.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <QUuid>
#include <QVariantList>

#include <optional>

namespace outbox::store {

// What an operator or a view targets. Empty fields do not filter. Every
// value reaches SQL as a bound parameter, never spliced into the text.
struct EventFilter {
    std::optional<core::Status> status;
    std::optional<bool> retrying; // pending with attempts > 0 (true) / = 0 (false)
    QString nameSpace;            // exact
    QString topic;                // exact
    std::optional<QUuid> tenantId;
    QString dedupeKey;      // exact
    QList<QUuid> ids;       // exact ids (a selection)
    QString errorContains;  // case-insensitive substring of last_error
    QString errorSignature; // exact normalised signature (see errorSignature())
    QString text;           // id prefix, or substring of dedupe key, topic, last_error
    QDateTime createdFrom;  // inclusive
    QDateTime createdTo;    // exclusive
    std::optional<core::Millis> olderThan; // updated_at < now() - olderThan (purge by age)
    // JSON object or array text: the payload contains it (`payload @> it`,
    // jsonb containment). Check it with payloadFilterProblem() first.
    QString payloadContains;
    // Only pending events held back by an earlier unfinished (pending,
    // processing or dead) event of their aggregate: what aggregate ordering
    // does not claim yet (see AggregateBlocker).
    bool aggregateBlocked = false;
    // The W3C trace id of the events' traceparent: 32 lower-case hex digits
    // (check it with traceIdProblem() first); outbox_events_trace_idx
    // answers it (sql/014).
    QString traceId;

    bool isEmpty() const;
    // True when an index cannot answer the filter (a text, error or payload
    // search): on a large set it reads many rows, so it should be bounded.
    // A payload search is answered by an index on pending and dead events
    // (sql/007_payload_search.sql), so it needs a scan only when it may
    // reach processing or delivered ones.
    bool needsScan() const;
    // A short human description for confirmations and the audit log, e.g.
    // "status=dead namespace=billing error~'timeout' older than 7d".
    QString describe() const;
    // Every field in one text: equal filters give equal keys and different
    // filters different keys, so it can stand for the filter where a string
    // is wanted ("is this the same question?"). A field added to the struct
    // and not to key() does not compile (see eventfilter.cpp).
    QString key() const;

    friend bool operator==(const EventFilter &, const EventFilter &) = default;
};

// A WHERE condition with positional (?) placeholders and its values.
struct SqlCondition {
    QString sql; // "TRUE" for an empty filter
    QVariantList values;
};

// `alias` prefixes the columns ("e" -> "e.status").
SqlCondition toSqlCondition(const EventFilter &filter, const QString &alias = {});

// Groups errors that differ only in ids and numbers: uuids, hex strings,
// numbers and quoted values are replaced by placeholders and whitespace is
// folded; the same function exists in SQL (errorSignatureSql) so that
// grouping happens in the database.
QString errorSignature(const QString &error);

// Why `text` cannot be EventFilter::payloadContains, with the fix; empty when
// it can (a JSON object or array). An empty text is fine: no payload filter.
QString payloadFilterProblem(const QString &text);
// Why `text` cannot be EventFilter::traceId, with the fix; empty when it can
// (32 hex digits, not all zeros; upper case is fine, the filter takes it in
// lower case: normalizedTraceId()).
QString traceIdProblem(const QString &text);
QString normalizedTraceId(const QString &text);
QString errorSignatureSql(const QString &column);

} // namespace outbox::store
