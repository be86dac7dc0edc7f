#include "console/widgets/detailpane.h"

#include "console/model/consolesettings.h"
#include "console/model/storeclient.h"
#include "console/widgets/jsonhighlighter.h"
#include "core/enumnames.h"
#include "core/uuidtext.h"
#include "ui_detailpane.h"

#include <QFontDatabase>
#include <QLabel>
#include <QLocale>

namespace outbox::console {

namespace {

constexpr qsizetype kHighlightLimit = 512 * 1024; // larger payloads are shown plain
constexpr int kTimeRole = Qt::UserRole + 1;       // a history row's time

QString timeText(const QDateTime &time, const QDateTime &now) {
    if (!time.isValid()) {
        return QStringLiteral("—");
    }
    return QStringLiteral("%1  (%2)").arg(formatAbsoluteTime(time), formatRelativeTime(time, now));
}

// Background, border, text: readable on light and dark palettes alike.
constexpr core::EnumName<Explanation::Tone> kToneStyles[] = {
    {Explanation::Tone::Ok, "background:#e3f4e1; border:1px solid #7bbf72; color:#1d4d18;"},
    {Explanation::Tone::Waiting, "background:#e6eef9; border:1px solid #7f9ecf; color:#1f3760;"},
    {Explanation::Tone::Warning, "background:#fff1d6; border:1px solid #d9a43c; color:#5c3d00;"},
    {Explanation::Tone::Error, "background:#fde2e2; border:1px solid #d27070; color:#6b1010;"}};

QString toneStyle(Explanation::Tone tone) {
    return core::nameOf(kToneStyles, tone);
}

QLabel *valueLabel(const QString &text) {
    auto *label = new QLabel(text);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    return label;
}

} // namespace

DetailPane::DetailPane(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::DetailPane>())
    , m_highlighter(nullptr) {
    m_ui->setupUi(this);
    setObjectName(QStringLiteral("detailPane"));
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    m_ui->payloadEdit->setFont(mono);
    m_highlighter = new JsonHighlighter(m_ui->payloadEdit->document());
    const QColor base = palette().color(QPalette::Base);
    m_highlighter->setDarkBackground(base.lightness() < 128);
    QFont title = m_ui->titleLabel->font();
    title.setPointSizeF(title.pointSizeF() * 1.15);
    title.setBold(true);
    m_ui->titleLabel->setFont(title);
    m_ui->whyLabel->setMargin(8);
    m_ui->failuresTree->setWordWrap(false);
    m_ui->historyTree->setWordWrap(false);
    connect(m_ui->failuresTree, &QTreeWidget::currentItemChanged, this,
            [this](QTreeWidgetItem *item) {
                m_ui->failureText->setPlainText(item ? item->data(5, Qt::UserRole).toString()
                                                     : QString());
            });
    connect(m_ui->historyTree, &QTreeWidget::currentItemChanged, this,
            [this](QTreeWidgetItem *item) {
                m_ui->historyText->setPlainText(item ? item->data(4, Qt::UserRole).toString()
                                                     : QString());
            });
    m_clock.setInterval(1000);
    connect(&m_clock, &QTimer::timeout, this, &DetailPane::renderExplanation);
    connect(&m_clock, &QTimer::timeout, this, &DetailPane::renderTimes);
    clearContents(tr("Select an event to see its details."));
}

DetailPane::~DetailPane() = default;

void DetailPane::setClient(StoreClient *client) {
    if (m_client) {
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    m_requestId = 0;
    if (m_client) {
        connect(m_client, &StoreClient::detailReady, this, &DetailPane::onDetail);
        connect(
            m_client, &StoreClient::requestFailed, this,
            [this](RequestId id, RequestKind, const core::Error &error) { onFailed(id, error); });
    }
}

void DetailPane::setEvent(const QUuid &id) {
    if (id == m_id) {
        return;
    }
    m_id = id;
    m_detail.reset();
    if (id.isNull()) {
        clearContents(tr("Select an event to see its details."));
        return;
    }
    clearContents(tr("Loading %1…").arg(core::uuidText(id)));
    refresh();
}

void DetailPane::refresh() {
    if (m_client && !m_id.isNull()) {
        m_requestId = m_client->requestDetail(m_id, QStringLiteral("detail"));
    }
}

void DetailPane::setDispatchActivity(const DispatchActivity &activity) {
    m_activity = activity;
    renderExplanation();
}

QDateTime DetailPane::serverNow() const {
    if (!m_detail || !m_detail->serverTime.isValid()) {
        return QDateTime::currentDateTimeUtc();
    }
    return m_detail->serverTime.addMSecs(m_sinceDetail.elapsed());
}

void DetailPane::onDetail(RequestId id, const store::EventDetail &detail) {
    if (id != m_requestId || detail.event.id != m_id) {
        return;
    }
    m_requestId = 0;
    const bool sameEvent = m_detail && m_detail->event.id == detail.event.id;
    if (sameEvent && m_detail->event == detail.event && m_detail->attempts == detail.attempts &&
        m_detail->audit == detail.audit && m_detail->replays == detail.replays) {
        // Nothing new: keep scroll positions and selections in the pane.
        m_detail->serverTime = detail.serverTime;
        m_sinceDetail.start();
        return;
    }
    m_detail = detail;
    m_sinceDetail.start();
    render();
    if (std::exchange(m_following, false)) {
        Q_EMIT linkFollowed(detail.event.id, detail.event.status);
    }
}

void DetailPane::onFailed(RequestId id, const core::Error &error) {
    if (id != m_requestId) {
        return;
    }
    m_requestId = 0;
    if (error.kind == core::ErrorKind::NotFound) {
        m_detail.reset();
        clearContents(error.message);
        return;
    }
    // Keep what is shown; say that it may be stale.
    m_ui->whyLabel->setToolTip(tr("Could not refresh: %1").arg(error.message));
    if (!m_detail) {
        clearContents(tr("Could not load the event: %1").arg(error.message));
    }
}

void DetailPane::clearContents(const QString &message) {
    m_clock.stop();
    m_ui->titleLabel->setText(message);
    m_ui->whyLabel->clear();
    m_ui->whyLabel->hide();
    m_ui->tabs->setEnabled(false);
    m_shownPayload.clear();
    m_ui->payloadEdit->clear();
    m_ui->failuresTree->clear();
    m_ui->historyTree->clear();
    while (m_ui->metadataForm->rowCount() > 0) {
        m_ui->metadataForm->removeRow(0);
    }
    m_timeLabels.clear();
    m_ui->tabs->setTabText(m_ui->tabs->indexOf(m_ui->failuresTab), tr("Failures"));
    m_ui->tabs->setTabText(m_ui->tabs->indexOf(m_ui->historyTab), tr("Operator history"));
}

void DetailPane::render() {
    const store::EventDetail &d = *m_detail;
    const core::OutboxEvent &e = d.event;
    m_ui->tabs->setEnabled(true);
    QString status = core::statusName(e.status);
    if (e.status == core::Status::Pending && e.attempts > 0) {
        status = tr("pending, retrying");
    }
    m_ui->titleLabel->setText(tr("%1 · %2 · %3").arg(e.topic, status, core::uuidText(e.id)));
    renderExplanation();
    renderMetadata(d);
    if (m_shownPayload != e.payload) {
        m_shownPayload = e.payload;
        m_highlighter->setDocument(
            e.payload.size() <= kHighlightLimit ? m_ui->payloadEdit->document() : nullptr);
        m_ui->payloadEdit->setPlainText(prettyJson(e.payload));
    }
    renderHistory(d);
    m_clock.start();
}

void DetailPane::renderExplanation() {
    if (!m_detail) {
        return;
    }
    const Explanation why =
        explainEvent(m_detail->event, serverNow(), m_activity, m_detail->blockedBy);
    if (m_ui->whyLabel->text() != why.text) {
        m_ui->whyLabel->setText(why.text);
    }
    m_ui->whyLabel->setStyleSheet(
        QStringLiteral("QLabel { %1 border-radius: 4px; }").arg(toneStyle(why.tone)));
    m_ui->whyLabel->show();
}

void DetailPane::renderTimes() {
    const QDateTime now = serverNow();
    for (const auto &[label, time] : std::as_const(m_timeLabels)) {
        const QString text = timeText(time, now);
        if (label && label->text() != text) {
            label->setText(text);
        }
    }
    for (QTreeWidget *tree : {m_ui->failuresTree, m_ui->historyTree}) {
        const int column = tree == m_ui->failuresTree ? 1 : 0;
        for (int i = 0; i < tree->topLevelItemCount(); ++i) {
            QTreeWidgetItem *item = tree->topLevelItem(i);
            const QString text =
                formatRelativeTime(item->data(column, kTimeRole).toDateTime(), now);
            if (item->text(column) != text) {
                item->setText(column, text);
            }
        }
    }
}

void DetailPane::renderMetadata(const store::EventDetail &d) {
    const core::OutboxEvent &e = d.event;
    const QDateTime now = d.serverTime.isValid() ? d.serverTime : QDateTime::currentDateTimeUtc();
    while (m_ui->metadataForm->rowCount() > 0) {
        m_ui->metadataForm->removeRow(0);
    }
    m_timeLabels.clear();
    const auto row = [this](const QString &name, const QString &value) {
        QLabel *label = valueLabel(value.isEmpty() ? QStringLiteral("—") : value);
        m_ui->metadataForm->addRow(name, label);
        return label;
    };
    // Times say how long ago as well; renderTimes() keeps that current.
    const auto timeRow = [this, &row, &now](const QString &name, const QDateTime &time) {
        QLabel *label = row(name, time.isValid() ? timeText(time, now) : QString());
        if (time.isValid()) {
            m_timeLabels.append({label, time});
        }
    };
    row(tr("ID"), core::uuidText(e.id));
    row(tr("Status"), core::statusName(e.status));
    row(tr("Namespace"), e.nameSpace);
    row(tr("Topic"), e.topic);
    row(tr("Tenant"), e.tenantId ? core::uuidText(*e.tenantId) : QString());
    row(tr("Dedupe key"), e.dedupeKey.value_or(QString()));
    row(tr("Aggregate"), e.aggregateType || e.aggregateId
                             ? QStringLiteral("%1 / %2").arg(e.aggregateType.value_or(QString()),
                                                             e.aggregateId.value_or(QString()))
                             : QString());
    row(tr("Attempts"),
        e.maxAttempts ? tr("%1 of %2 (the event's own limit)").arg(e.attempts).arg(*e.maxAttempts)
                      : tr("%1 (limit: the dispatcher's max attempts)").arg(e.attempts));
    timeRow(tr("Next attempt"), e.status == core::Status::Pending ? e.nextAttemptAt : QDateTime());
    row(tr("Lease holder"), e.lockedBy ? core::uuidText(*e.lockedBy) : QString());
    timeRow(tr("Lease until"), e.lockedUntil);
    row(tr("Last error"), e.lastError.value_or(QString()).left(4000));
    timeRow(tr("Delivered"), e.deliveredAt);
    timeRow(tr("Created"), e.createdAt);
    timeRow(tr("Updated"), e.updatedAt);
    row(tr("Replay of"), e.replayOf ? core::uuidText(*e.replayOf) : QString());
    // Each replay is a link that shows that event.
    QStringList replays;
    for (const QUuid &id : d.replays) {
        replays << QStringLiteral("<a href=\"%1\">%1</a>").arg(core::uuidText(id));
    }
    QLabel *replayed = row(tr("Replayed as"), QString());
    if (!replays.isEmpty()) {
        replayed->setTextFormat(Qt::RichText);
        replayed->setText(replays.join(QLatin1String("<br>")));
        replayed->setTextInteractionFlags(Qt::TextBrowserInteraction);
        replayed->setObjectName(QStringLiteral("replayedAs"));
        connect(replayed, &QLabel::linkActivated, this, [this](const QString &link) {
            m_following = true;
            setEvent(QUuid::fromString(link));
        });
    }
    renderTrace(e);
    row(tr("Payload size"), QLocale().formattedDataSize(e.payload.size()));
}

// The trace id: selectable (to copy), and a link to the profile's trace
// viewer when it has one.
void DetailPane::renderTrace(const core::OutboxEvent &e) {
    const QString traceId = core::traceIdOf(e.traceparent);
    QLabel *trace = valueLabel(traceId.isEmpty() ? QStringLiteral("—") : traceId);
    trace->setObjectName(QStringLiteral("traceId"));
    const QUrl url = traceViewerUrl(m_traceUrlTemplate, traceId);
    if (url.isValid()) {
        trace->setTextFormat(Qt::RichText);
        trace->setText(QStringLiteral("<a href=\"%1\">%2</a>")
                           .arg(url.toString(QUrl::FullyEncoded).toHtmlEscaped(), traceId));
        trace->setTextInteractionFlags(Qt::TextBrowserInteraction);
        trace->setOpenExternalLinks(true);
        trace->setToolTip(tr("Open the trace in %1 (the trace viewer of this connection profile)")
                              .arg(url.host()));
    } else if (!traceId.isEmpty()) {
        trace->setToolTip(tr("Select to copy; set a trace viewer URL in the connection profile "
                             "to get a link."));
    }
    m_ui->metadataForm->addRow(tr("Trace id"), trace);
    if (e.traceparent)
        m_ui->metadataForm->addRow(tr("Traceparent"), valueLabel(*e.traceparent));
    if (e.tracestate)
        m_ui->metadataForm->addRow(tr("Tracestate"), valueLabel(*e.tracestate));
}

void DetailPane::setTraceUrlTemplate(const QString &urlTemplate) {
    if (m_traceUrlTemplate == urlTemplate)
        return;
    m_traceUrlTemplate = urlTemplate;
    if (m_detail)
        renderMetadata(*m_detail);
}

void DetailPane::renderHistory(const store::EventDetail &d) {
    const QDateTime now = d.serverTime.isValid() ? d.serverTime : QDateTime::currentDateTimeUtc();
    m_ui->failuresTree->clear();
    QList<QTreeWidgetItem *> failures;
    // Newest first: the latest failure is what an operator reads first.
    for (auto it = d.attempts.crbegin(); it != d.attempts.crend(); ++it) {
        const core::AttemptRecord &a = *it;
        auto *item = new QTreeWidgetItem;
        item->setText(0, QString::number(a.attempt));
        item->setText(1, formatRelativeTime(a.at, now));
        item->setData(1, kTimeRole, a.at);
        item->setToolTip(1, formatAbsoluteTime(a.at));
        item->setText(2, a.httpStatus ? QString::number(*a.httpStatus) : tr("none"));
        item->setText(3, tr("%1 ms").arg(a.durationMs));
        item->setText(4, a.workerId ? core::uuidText(*a.workerId).left(8) : QString());
        item->setToolTip(4, a.workerId ? core::uuidText(*a.workerId) : QString());
        item->setText(5, firstLine(a.error, 300));
        item->setToolTip(5, a.error.left(2000));
        item->setData(5, Qt::UserRole, a.error);
        failures.append(item);
    }
    m_ui->failuresTree->addTopLevelItems(failures);
    m_ui->failureText->clear();
    if (!failures.isEmpty()) {
        m_ui->failuresTree->setCurrentItem(failures.constFirst());
    }
    m_ui->failuresTree->resizeColumnToContents(0);
    m_ui->failuresTree->resizeColumnToContents(1);
    m_ui->failuresTree->resizeColumnToContents(2);
    m_ui->failuresTree->resizeColumnToContents(3);
    m_ui->failuresTree->resizeColumnToContents(4);
    m_ui->tabs->setTabText(m_ui->tabs->indexOf(m_ui->failuresTab),
                           tr("Failures (%1)").arg(d.attempts.size()));

    m_ui->historyTree->clear();
    QList<QTreeWidgetItem *> history;
    for (auto it = d.audit.crbegin(); it != d.audit.crend(); ++it) {
        const core::AuditRecord &a = *it;
        auto *item = new QTreeWidgetItem;
        item->setText(0, formatRelativeTime(a.at, now));
        item->setData(0, kTimeRole, a.at);
        item->setToolTip(0, formatAbsoluteTime(a.at));
        item->setText(1, a.action);
        QString who = a.dbUser;
        if (!a.osUser.isEmpty()) {
            who += QStringLiteral(" (%1@%2)").arg(a.osUser, a.host);
        }
        item->setText(2, who);
        item->setText(3, a.skipped > 0 ? tr("%1, %2 skipped").arg(a.affected).arg(a.skipped)
                                       : QString::number(a.affected));
        item->setText(4, a.filter);
        item->setToolTip(4, a.filter);
        item->setData(4, Qt::UserRole,
                      tr("%1 by %2 at %3: changed %4, skipped %5.\nTarget: %6")
                          .arg(a.action, who, formatAbsoluteTime(a.at))
                          .arg(a.affected)
                          .arg(a.skipped)
                          .arg(a.filter));
        history.append(item);
    }
    m_ui->historyTree->addTopLevelItems(history);
    m_ui->historyText->clear();
    if (!history.isEmpty()) {
        m_ui->historyTree->setCurrentItem(history.constFirst());
    }
    for (int c = 0; c < 4; ++c) {
        m_ui->historyTree->resizeColumnToContents(c);
    }
    m_ui->tabs->setTabText(m_ui->tabs->indexOf(m_ui->historyTab),
                           tr("Operator history (%1)").arg(d.audit.size()));
}

} // namespace outbox::console
