#include "console/model/exportjob.h"

#include "store/session.h"

#include <QSaveFile>

namespace outbox::console {

ExportJob::ExportJob(store::EventFilter filter, QString path, QObject *parent)
    : BackgroundJob(parent)
    , m_filter(std::move(filter))
    , m_path(std::move(path)) {}

void ExportJob::reportResult(const core::Result<store::ExportResult> &result) {
    stopRunning();
    if (result.ok()) {
        Q_EMIT finished(result.value());
    } else {
        Q_EMIT failed(result.error());
    }
}

void ExportTask::run() const {
    const auto result = [this]() -> core::Result<store::ExportResult> {
        if (control->cancelRequested.load()) {
            store::ExportResult cancelled;
            cancelled.cancelled = true;
            return cancelled;
        }
        // Written beside the target and renamed over it at the end: a stopped
        // or failed export never leaves a file that looks complete.
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly)) {
            return core::Error{core::ErrorKind::Invalid,
                               QStringLiteral("cannot write %1: %2; choose a folder you may "
                                              "write to")
                                   .arg(path, file.errorString())};
        }
        store::Session session(connInfo, {.applicationName = application});
        if (auto opened = session.open(); !opened.ok()) {
            return opened.error();
        }
        auto exported = [&]() {
            store::EventExport exporter(session); // gone before the session closes
            store::ExportOptions options;
            options.pageSize = pageSize;
            options.progress = progressUntilCancelled(control, reportProgress);
            return exporter.run(filter, store::lineSink(file, path, format), options);
        }();
        session.close();
        if (!exported || exported->cancelled) {
            file.cancelWriting();
            return exported;
        }
        if (!file.commit()) {
            return core::Error{
                core::ErrorKind::Failed,
                QStringLiteral("saving %1 failed: %2").arg(path, file.errorString())};
        }
        return exported;
    }();
    reportResult(result);
}

} // namespace outbox::console
