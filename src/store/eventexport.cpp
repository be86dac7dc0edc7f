#include "store/eventexport.h"

#include "store/database.h"
#include "store/queries.h"
#include "store/session.h"

namespace outbox::store {

EventExport::EventExport(Session &session)
    : EventExport(session.database()) {}

EventExport::EventExport(QSqlDatabase db)
    : m_db(std::move(db)) {}

core::Result<qint64> EventExport::count(const EventFilter &filter) {
    const SqlCondition condition = toSqlCondition(filter, QStringLiteral("e"));
    const QString context = QStringLiteral("counting the events to export");
    auto query =
        exec(m_db, QLatin1String("SELECT count(*) FROM outbox_events e WHERE ") + condition.sql,
             condition.values, context);
    if (!query)
        return query.error();
    if (!query->next())
        return core::Error{core::ErrorKind::Failed,
                           context + QStringLiteral(": the server returned no row")};
    return query->value(0).toLongLong();
}

core::Result<ExportResult> EventExport::run(const EventFilter &filter, const Sink &sink,
                                            const ExportOptions &options) {
    if (options.pageSize < 1)
        return core::Error{
            core::ErrorKind::Invalid,
            QStringLiteral("export page size must be at least 1 (got %1)").arg(options.pageSize)};
    ExportResult result;
    auto total = count(filter);
    if (!total)
        return total.error();
    result.total = total.value();
    if (options.progress && !options.progress(0, result.total)) {
        result.cancelled = true;
        return result;
    }
    EventQueries queries(m_db);
    PageRequest request;
    request.filter = filter;
    request.order = SortOrder::OldestFirst;
    request.limit = options.pageSize;
    for (;;) {
        auto page = queries.page(request);
        if (!page)
            return page.error();
        for (const core::OutboxEvent &event : std::as_const(page->rows)) {
            if (auto written = sink(event); !written)
                return written.error();
            ++result.written;
        }
        if (!page->next)
            return result;
        request.after = page->next;
        if (options.progress &&
            !options.progress(result.written, std::max(result.total, result.written))) {
            result.cancelled = true;
            return result;
        }
    }
}

EventExport::Sink lineSink(QIODevice &device, const QString &name,
                           std::function<QByteArray(const core::OutboxEvent &event)> format) {
    return [&device, name,
            format = std::move(format)](const core::OutboxEvent &event) -> core::Result<void> {
        const QByteArray line = format(event) + '\n';
        if (device.write(line) != line.size())
            return core::Error{
                core::ErrorKind::Failed,
                QStringLiteral("writing %1 failed: %2").arg(name, device.errorString())};
        return {};
    };
}

} // namespace outbox::store
