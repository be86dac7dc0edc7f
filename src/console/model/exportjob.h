#pragma once

#include "console/model/backgroundjob.h"
#include "core/conninfo.h"
#include "core/event.h"
#include "core/result.h"
#include "store/eventexport.h"
#include "store/eventfilter.h"

#include <functional>
#include <memory>

namespace outbox::console {

// Writes every event matching a filter to a file as JSON lines, on a pool
// thread with its own connection (store::EventExport: keyset pages, constant
// memory). The file appears under its name only when the export is complete:
// until then it is written to a temporary file beside it, which a stop or a
// failure removes. Made by StoreClient::startExport().
class ExportJob final : public BackgroundJob {
    Q_OBJECT

public:
    ~ExportJob() override = default;
    Q_DISABLE_COPY_MOVE(ExportJob)

    const store::EventFilter &filter() const { return m_filter; }
    const QString &path() const { return m_path; }

    // cancel() stops after the current page and removes the partial file.

Q_SIGNALS:
    // result.cancelled: nothing was written to path().
    void finished(const outbox::store::ExportResult &result);

private:
    friend class StoreClient;
    ExportJob(store::EventFilter filter, QString path, QObject *parent);
    void reportResult(const core::Result<store::ExportResult> &result);

    store::EventFilter m_filter;
    QString m_path;
};

// One event as one line of JSON (no newline): every column, the payload
// spliced in as stored so that large numbers keep every digit (a payload that
// is not a JSON object or array goes in as a JSON string). The format of the
// console's exports, of a whole filter and of selected rows alike.
QByteArray eventJsonLine(const core::OutboxEvent &event);

// The body of an export, run on a pool thread.
struct ExportTask {
    core::ConnInfo connInfo;
    QString application;
    store::EventFilter filter;
    QString path;
    int pageSize = 1000;
    std::function<QByteArray(const core::OutboxEvent &event)> format; // one line, no newline
    std::shared_ptr<JobControl> control;
    std::function<void(qint64 done, qint64 total)> reportProgress;
    std::function<void(const core::Result<store::ExportResult> &result)> reportResult;

    void run() const;
};

} // namespace outbox::console
