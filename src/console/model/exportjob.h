#pragma once

#include "core/conninfo.h"
#include "core/event.h"
#include "core/result.h"
#include "store/eventexport.h"
#include "store/eventfilter.h"

#include <QObject>
#include <QPointer>

#include <atomic>
#include <functional>
#include <memory>

namespace outbox::console {

class ExportJob;

// Shared between an ExportJob (GUI thread) and the pool thread running it;
// only the atomic is touched from the pool thread.
struct ExportJobControl {
    std::atomic<bool> cancelRequested{false};
    QPointer<ExportJob> job;
};

// Writes every event matching a filter to a file as JSON lines, on a pool
// thread with its own connection (store::EventExport: keyset pages, constant
// memory). The file appears under its name only when the export is complete:
// until then it is written to a temporary file beside it, which a stop or a
// failure removes. Made by StoreClient::startExport().
class ExportJob final : public QObject {
    Q_OBJECT

public:
    ~ExportJob() override;
    Q_DISABLE_COPY_MOVE(ExportJob)

    const store::EventFilter &filter() const { return m_filter; }
    const QString &path() const { return m_path; }
    bool isRunning() const { return m_running; }

    // Thread-safe; stops after the current page and removes the partial file.
    void cancel();
    bool isCancelRequested() const;

Q_SIGNALS:
    void progress(qint64 done, qint64 total);
    // result.cancelled: nothing was written to path().
    void finished(const outbox::store::ExportResult &result);
    void failed(const outbox::core::Error &error);

private:
    friend class StoreClient;
    ExportJob(store::EventFilter filter, QString path, QObject *parent);
    void reportProgress(qint64 done, qint64 total);
    void reportResult(const core::Result<store::ExportResult> &result);

    std::shared_ptr<ExportJobControl> m_control;
    store::EventFilter m_filter;
    QString m_path;
    bool m_running = true;
};

// The body of an export, run on a pool thread.
struct ExportTask {
    core::ConnInfo connInfo;
    QString application;
    store::EventFilter filter;
    QString path;
    int pageSize = 1000;
    std::function<QByteArray(const core::OutboxEvent &event)> format; // one line, no newline
    std::shared_ptr<ExportJobControl> control;
    std::function<void(qint64 done, qint64 total)> reportProgress;
    std::function<void(const core::Result<store::ExportResult> &result)> reportResult;

    void run() const;
};

} // namespace outbox::console
