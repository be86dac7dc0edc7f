#include "console/model/exportjob.h"

#include "core/outputfile.h"
#include "core/uuidtext.h"
#include "store/session.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

namespace outbox::console {

namespace {

QJsonValue optionalText(const std::optional<QString> &value) {
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

QJsonValue optionalId(const std::optional<QUuid> &value) {
    return value ? QJsonValue(core::uuidText(*value)) : QJsonValue(QJsonValue::Null);
}

QJsonValue timeValue(const QDateTime &time) {
    return time.isValid() ? QJsonValue(time.toUTC().toString(Qt::ISODateWithMs))
                          : QJsonValue(QJsonValue::Null);
}

} // namespace

QByteArray eventJsonLine(const core::OutboxEvent &e) {
    QJsonObject o;
    o.insert(QStringLiteral("id"), core::uuidText(e.id));
    o.insert(QStringLiteral("namespace"), e.nameSpace);
    o.insert(QStringLiteral("topic"), e.topic);
    o.insert(QStringLiteral("aggregate_type"), optionalText(e.aggregateType));
    o.insert(QStringLiteral("aggregate_id"), optionalText(e.aggregateId));
    o.insert(QStringLiteral("tenant_id"), optionalId(e.tenantId));
    o.insert(QStringLiteral("dedupe_key"), optionalText(e.dedupeKey));
    o.insert(QStringLiteral("status"), core::statusName(e.status));
    o.insert(QStringLiteral("attempts"), e.attempts);
    o.insert(QStringLiteral("next_attempt_at"), timeValue(e.nextAttemptAt));
    o.insert(QStringLiteral("locked_by"), optionalId(e.lockedBy));
    o.insert(QStringLiteral("locked_until"), timeValue(e.lockedUntil));
    o.insert(QStringLiteral("last_error"), optionalText(e.lastError));
    o.insert(QStringLiteral("delivered_at"), timeValue(e.deliveredAt));
    o.insert(QStringLiteral("created_at"), timeValue(e.createdAt));
    o.insert(QStringLiteral("updated_at"), timeValue(e.updatedAt));
    o.insert(QStringLiteral("replay_of"), optionalId(e.replayOf));
    o.insert(QStringLiteral("max_attempts"),
             e.maxAttempts ? QJsonValue(*e.maxAttempts) : QJsonValue(QJsonValue::Null));
    o.insert(QStringLiteral("traceparent"), optionalText(e.traceparent));
    o.insert(QStringLiteral("tracestate"), optionalText(e.tracestate));
    QByteArray line = QJsonDocument(o).toJson(QJsonDocument::Compact);
    // The payload goes in as stored, so large numbers keep every digit.
    const QByteArray payload = e.payload.trimmed();
    const bool splice =
        !payload.isEmpty() && !payload.contains('\n') && !QJsonDocument::fromJson(payload).isNull();
    line.chop(1); // the closing brace
    line += ",\"payload\":";
    if (splice) {
        line += payload;
    } else {
        // Scalars (and anything odd) go through a JSON string.
        QJsonObject wrap;
        wrap.insert(QStringLiteral("v"), QString::fromUtf8(payload));
        const QByteArray w = QJsonDocument(wrap).toJson(QJsonDocument::Compact);
        line += w.mid(5, w.size() - 6); // {"v":<value>}
    }
    line += '}';
    return line;
}

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
        // Written beside the target and moved onto it at the end: a stopped
        // or failed export never leaves a file that looks complete. The file
        // dialog has asked before replacing a file; links and devices are
        // refused all the same.
        auto file = core::OutputFile::create(path, core::OutputFile::Existing::Replace);
        if (!file) {
            return file.error();
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
            return exporter.run(filter, store::lineSink(file.value()->device(), path, format),
                                options);
        }();
        session.close();
        if (!exported || exported->cancelled) {
            file.value()->cancel();
            return exported;
        }
        if (auto committed = file.value()->commit(); !committed) {
            return committed.error();
        }
        return exported;
    }();
    reportResult(result);
}

} // namespace outbox::console
