#pragma once

#include "console/model/consoletypes.h"
#include "console/model/eventexplanation.h"
#include "core/status.h"
#include "store/queries.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QPair>
#include <QPointer>
#include <QTimer>
#include <QUuid>
#include <QWidget>

#include <memory>
#include <optional>

class QLabel;

namespace Ui {
class DetailPane;
}

namespace outbox::console {

class JsonHighlighter;
class StoreClient;

// Everything about one event: the "why is this not delivered yet?" line,
// all metadata, the payload as highlighted JSON, the failure history
// (outbox_attempts) and the operator history (outbox_audit). Loads through
// the StoreClient; refresh() re-reads the shown event.
class DetailPane final : public QWidget {
    Q_OBJECT

public:
    explicit DetailPane(QWidget *parent = nullptr);
    ~DetailPane() override;
    Q_DISABLE_COPY_MOVE(DetailPane)

    void setClient(StoreClient *client);
    // A null id clears the pane.
    void setEvent(const QUuid &id);
    void refresh();
    void setDispatchActivity(const DispatchActivity &activity);
    // The connection profile's trace viewer (ConnectionProfile::
    // traceUrlTemplate): the trace id becomes a link to it. Empty: plain text.
    void setTraceUrlTemplate(const QString &urlTemplate);

Q_SIGNALS:
    // A link to another event (a replay) was followed and that event shown.
    void linkFollowed(const QUuid &id, core::Status status);

private:
    void onDetail(RequestId id, const store::EventDetail &detail);
    void onFailed(RequestId id, const core::Error &error);
    void render();
    void renderExplanation();
    void renderTimes();
    void renderMetadata(const store::EventDetail &detail);
    void renderTrace(const core::OutboxEvent &event);
    void renderHistory(const store::EventDetail &detail);
    void clearContents(const QString &message);
    QDateTime serverNow() const;

    std::unique_ptr<Ui::DetailPane> m_ui;
    JsonHighlighter *m_highlighter;
    StoreClient *m_client = nullptr;
    QUuid m_id;
    RequestId m_requestId = 0;
    std::optional<store::EventDetail> m_detail;
    QElapsedTimer m_sinceDetail;
    DispatchActivity m_activity;
    QTimer m_clock;
    QByteArray m_shownPayload;
    QString m_traceUrlTemplate;
    bool m_following = false;                               // a followed link is loading
    QList<QPair<QPointer<QLabel>, QDateTime>> m_timeLabels; // metadata rows with a time
};

} // namespace outbox::console
