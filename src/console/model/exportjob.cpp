#include "console/model/exportjob.h"

#include "store/session.h"

#include <QSaveFile>

namespace outbox::console {

ExportJob::ExportJob(store::EventFilter filter, QString path, QObject *parent)
    : QObject(parent)
    , m_control(std::make_shared<ExportJobControl>())
    , m_filter(std::move(filter))
    , m_path(std::move(path)) {
    m_control->job = this;
}

ExportJob::~ExportJob() {
    if (m_running) {
        m_control->cancelRequested.store(true);
    }
}

void ExportJob::cancel() {
    m_control->cancelRequested.store(true);
}

bool ExportJob::isCancelRequested() const {
    return m_control->cancelRequested.load();
}

void ExportJob::reportProgress(qint64 done, qint64 total) {
    if (m_running) {
        Q_EMIT progress(done, total);
    }
}

void ExportJob::reportResult(const core::Result<store::ExportResult> &result) {
    m_running = false;
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
            const auto flag = control;
            const auto progressSink = reportProgress;
            options.progress = [flag, progressSink](qint64 done, qint64 total) {
                progressSink(done, total);
                return !flag->cancelRequested.load();
            };
            return exporter.run(
                filter,
                [&](const core::OutboxEvent &event) -> core::Result<void> {
                    QByteArray line = format(event);
                    line += '\n';
                    if (file.write(line) != line.size()) {
                        return core::Error{
                            core::ErrorKind::Failed,
                            QStringLiteral("writing %1 failed: %2").arg(path, file.errorString())};
                    }
                    return {};
                },
                options);
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
