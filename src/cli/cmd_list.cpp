#include "cli/commands.h"
#include "cli/filteroptions.h"
#include "cli/output.h"
#include "core/uuidtext.h"
#include "store/queries.h"

#include <QJsonDocument>

namespace outbox::cli {

namespace {

// The cursor is opaque to users: a version tag, then the last row's
// created_at (ms since the epoch) and id, base64url-encoded.
QString encodeCursor(const store::PageCursor &cursor) {
    const QByteArray raw = "c1:" + QByteArray::number(cursor.createdAt.toMSecsSinceEpoch()) + ':' +
                           core::uuidText(cursor.id).toLatin1();
    return QString::fromLatin1(
        raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

std::optional<store::PageCursor> decodeCursor(const QString &text) {
    const auto decoded = QByteArray::fromBase64Encoding(
        text.trimmed().toLatin1(),
        QByteArray::Base64UrlEncoding | QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return std::nullopt;
    const QList<QByteArray> parts = decoded.decoded.split(':');
    if (parts.size() != 3 || parts.at(0) != "c1")
        return std::nullopt;
    bool ok = false;
    const qint64 msecs = parts.at(1).toLongLong(&ok);
    auto id = parseUuid(QString::fromLatin1(parts.at(2)));
    if (!ok || !id)
        return std::nullopt;
    return store::PageCursor{QDateTime::fromMSecsSinceEpoch(msecs, Qt::UTC), *id};
}

QString tableTime(const QDateTime &time) {
    return time.isValid() ? time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                          : QString();
}

// What the operator wants to know at a glance, per status.
QString info(const core::OutboxEvent &event, const QDateTime &now) {
    switch (event.status) {
    case core::Status::Pending:
        if (event.nextAttemptAt.isValid() && event.nextAttemptAt > now)
            return (event.attempts > 0 ? QStringLiteral("retry ") : QStringLiteral("due ")) +
                   relativeTime(event.nextAttemptAt, now) +
                   (event.lastError ? QStringLiteral(": ") + elide(*event.lastError, 60)
                                    : QString());
        return event.attempts > 0 && event.lastError
                   ? QStringLiteral("due now: ") + elide(*event.lastError, 60)
                   : QStringLiteral("due now");
    case core::Status::Processing:
        if (event.lockedUntil.isValid() && event.lockedUntil <= now)
            return QStringLiteral("lease expired ") + relativeTime(event.lockedUntil, now);
        return QStringLiteral("leased, ends ") + relativeTime(event.lockedUntil, now);
    case core::Status::Delivered:
        return QStringLiteral("delivered ") + relativeTime(event.deliveredAt, now);
    case core::Status::Dead:
        return event.lastError ? elide(*event.lastError, 70) : QString();
    }
    return QString();
}

} // namespace

int runList(CommandContext &context) {
    CommandParser parser(context,
                         QStringLiteral("List events, newest first, one page at a time. The next "
                                        "page's cursor is printed on stderr (\"next cursor: "
                                        "...\") or as next_cursor with --json; pass it to "
                                        "--after with the same filters."));
    store::PageRequest request;
    request.limit = 50;
    parser.addOptions(filterOptions(request.filter));
    const auto after = option("after", "Continue after this cursor.", "cursor");
    const auto oldestFirst = option("oldest-first", "Oldest events first.");
    const auto json =
        option("json", "Print {\"events\": [...], \"next_cursor\": ...} with full events.");
    const auto jsonl = option("jsonl", "Print one full event per line (JSON Lines).");
    parser.addOptions({integerOption("limit <n>", "Events per page (1-10000, default 50).",
                                     request.limit, 1, 10000),
                       after, oldestFirst, json, jsonl});
    parser.setEpilog(QStringLiteral(
        "Example: page through every dead event of one namespace\n"
        "  outboxctl list --status dead --namespace billing --jsonl > page1.jsonl\n"
        "  outboxctl list --status dead --namespace billing --jsonl --after <cursor>"));
    if (auto exit = parser.parseOptionsOnly())
        return *exit;
    if (parser.isSet(json) && parser.isSet(jsonl))
        return parser.usageError(QStringLiteral("give --json or --jsonl, not both"));
    if (auto read = parser.readOptions(); !read)
        return parser.usageError(read.errorMessage());

    request.order =
        parser.isSet(oldestFirst) ? store::SortOrder::OldestFirst : store::SortOrder::NewestFirst;
    if (parser.isSet(after)) {
        request.after = decodeCursor(parser.value(after));
        if (!request.after)
            return parser.usageError(QStringLiteral("--after: '%1' is not a cursor printed by "
                                                    "outboxctl list")
                                         .arg(parser.value(after)));
    }

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    store::EventQueries queries(*connection);
    auto page = queries.page(request);
    if (!page)
        return parser.fail(page.error());

    auto &out = context.console.out();
    auto &err = context.console.err();
    const QString next = page->next ? encodeCursor(*page->next) : QString();
    if (parser.isSet(json)) {
        QByteArray text = "{\"events\":[";
        for (qsizetype i = 0; i < page->rows.size(); ++i) {
            if (i > 0)
                text += ',';
            text += eventJson(page->rows.at(i));
        }
        text += "],\"next_cursor\":";
        text += next.isEmpty() ? QByteArray("null") : QByteArray('"' + next.toLatin1() + '"');
        text += '}';
        out << QString::fromUtf8(text) << '\n';
        return ExitOk;
    }
    if (parser.isSet(jsonl)) {
        for (const core::OutboxEvent &event : std::as_const(page->rows))
            printJsonLine(out, event);
    } else if (page->rows.isEmpty()) {
        out << (request.after ? "No more events.\n" : "No events match.\n");
    } else {
        const QDateTime now = QDateTime::currentDateTimeUtc();
        Table table({QStringLiteral("ID"), QStringLiteral("STATUS"), QStringLiteral("ATTEMPTS"),
                     QStringLiteral("NAMESPACE"), QStringLiteral("TOPIC"),
                     QStringLiteral("CREATED (UTC)"), QStringLiteral("INFO")});
        table.setRightAligned(2);
        for (const core::OutboxEvent &event : std::as_const(page->rows)) {
            table.addRow({core::uuidText(event.id), core::statusName(event.status),
                          QString::number(event.attempts), event.nameSpace, event.topic,
                          tableTime(event.createdAt), info(event, now)});
        }
        table.print(out);
    }
    out.flush();
    if (!next.isEmpty())
        err << "next cursor: " << next << '\n';
    return ExitOk;
}

} // namespace outbox::cli
