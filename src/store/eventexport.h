#pragma once

#include "core/event.h"
#include "core/result.h"
#include "store/eventfilter.h"

#include <QIODevice>
#include <QSqlDatabase>

#include <functional>

namespace outbox::store {

class Session;

struct ExportOptions {
    int pageSize = 1000; // rows read per statement; memory holds one page
    // Called after every page with the rows written so far and the rows that
    // matched at the start; return false to stop after this page.
    std::function<bool(qint64 done, qint64 total)> progress;
};

struct ExportResult {
    qint64 total = 0;   // rows matching the filter when the export started
    qint64 written = 0; // rows handed to the sink
    bool cancelled = false;
};

// Every event matching a filter, oldest first, read page by page with a
// keyset on (created_at, id) (EventQueries::page), so memory and the cost of
// each statement stay the same whatever the number of rows, and no
// transaction is held open between pages. The sink gets one event at a time
// and may fail (a full disk): the export stops with its error. Rows inserted
// while the export runs may be included when they sort after the cursor.
class EventExport final {
public:
    using Sink = std::function<core::Result<void>(const core::OutboxEvent &event)>;

    explicit EventExport(Session &session);
    explicit EventExport(QSqlDatabase db);
    Q_DISABLE_COPY_MOVE(EventExport)

    // How many rows match (the export's total).
    core::Result<qint64> count(const EventFilter &filter);
    core::Result<ExportResult> run(const EventFilter &filter, const Sink &sink,
                                   const ExportOptions &options = {});

private:
    QSqlDatabase m_db;
};

// The sink that writes each event as one line to `device`: format(event) (one
// line of text, JSON for a JSON-lines export) and a newline. A short write
// (a full disk) stops the export with "writing <name> failed: <why>".
EventExport::Sink lineSink(QIODevice &device, const QString &name,
                           std::function<QByteArray(const core::OutboxEvent &event)> format);

} // namespace outbox::store
