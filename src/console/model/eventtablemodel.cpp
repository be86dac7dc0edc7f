#include "console/model/eventtablemodel.h"

#include "console/model/storeclient.h"
#include "core/uuidtext.h"

#include <QBrush>
#include <QColor>
#include <QSet>

#include <algorithm>

namespace outbox::console {

namespace {

QString shortId(const QUuid &id) {
    return core::uuidText(id).left(8);
}

} // namespace

EventTableModel::EventTableModel(QObject *parent)
    : SnapshotTableModel({tr("ID"), tr("Status"), tr("Namespace"), tr("Topic"), tr("Tenant"),
                          tr("Dedupe key"), tr("Attempts"), tr("Next attempt"), tr("Lease holder"),
                          tr("Lease"), tr("Last error"), tr("Age")},
                         parent)
    , m_laneKey(QStringLiteral("events-") + QString::number(reinterpret_cast<quintptr>(this), 16)) {
    Q_ASSERT(columnCount() == ColumnCount);
    m_clock.setInterval(1000);
    connect(&m_clock, &QTimer::timeout, this, &EventTableModel::tick);
}

EventTableModel::~EventTableModel() = default;

void EventTableModel::setClient(StoreClient *client) {
    if (m_client == client) {
        return;
    }
    if (m_client) {
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    setIds(0, 0);
    if (m_client) {
        connect(m_client, &StoreClient::pageReady, this, &EventTableModel::onPageReady);
        connect(m_client, &StoreClient::requestFailed, this,
                [this](RequestId id, RequestKind, const core::Error &error) {
                    onRequestFailed(id, error);
                });
    }
}

void EventTableModel::setQuery(const store::EventFilter &filter, store::SortOrder order) {
    beginResetModel();
    m_filter = filter;
    m_order = order;
    m_rows.clear();
    m_next.reset();
    endResetModel();
    m_latest.clear();
    setHeldRows(0);
    setIds(0, 0);
    m_search = {};
    refresh();
}

void EventTableModel::setPageSize(int rows) {
    m_pageSize = std::max(1, rows);
    m_refreshCap = std::max(m_refreshCap, m_pageSize);
}

void EventTableModel::setIds(RequestId refreshId, RequestId fetchId) {
    const bool was = isLoading();
    m_refreshId = refreshId;
    m_fetchId = fetchId;
    if (was != isLoading()) {
        Q_EMIT loadingChanged(isLoading());
    }
}

void EventTableModel::refresh() {
    if (!m_client) {
        return;
    }
    if (m_filter.needsScan() && m_search.answered) {
        constexpr qint64 kPacing = 20; // a search may take 5% of the time
        if (m_search.stopped || isLoading() ||
            m_search.answerAt.elapsed() < m_search.tookMs * kPacing) {
            return;
        }
    }
    store::PageRequest request;
    request.filter = m_filter;
    request.order = m_order;
    request.limit = std::clamp(int(m_rows.size()) + m_heldRows, m_pageSize, m_refreshCap);
    if (m_filter.needsScan()) {
        request.timeout = m_searchTimeout;
    }
    m_search.sent.start();
    // Same lane as fetchMore: a fetch in flight is superseded, its rows
    // would be stale against the new window anyway.
    setIds(m_client->requestPage(request, m_laneKey), 0);
}

bool EventTableModel::canFetchMore(const QModelIndex &parent) const {
    return !parent.isValid() && m_client && m_next.has_value() && !isLoading();
}

void EventTableModel::fetchMore(const QModelIndex &parent) {
    if (!canFetchMore(parent)) {
        return;
    }
    store::PageRequest request;
    request.filter = m_filter;
    request.order = m_order;
    request.limit = m_pageSize;
    request.after = m_next;
    if (m_filter.needsScan()) {
        request.timeout = m_searchTimeout;
    }
    m_search.sent.start();
    setIds(0, m_client->requestPage(request, m_laneKey));
}

void EventTableModel::onPageReady(RequestId id, const PageResult &result) {
    if (id == 0) {
        return;
    }
    if (id != m_refreshId && id != m_fetchId) {
        return;
    }
    noteAnswer();
    if (result.page.stoppedAfter) {
        m_search.stopped = true;
        setIds(0, 0);
        Q_EMIT loadFailed(tr("The search stopped after %1 without an answer: too many events to "
                             "read. Narrow the filter (status, namespace, topic or a time range) "
                             "to search further.")
                              .arg(core::formatDuration(*result.page.stoppedAfter)));
        return;
    }
    if (id == m_refreshId) {
        setIds(0, 0);
        applySnapshot(result.page.rows, result.serverTime, result.page.next);
    } else if (id == m_fetchId) {
        setIds(0, 0);
        appendPage(result.page.rows, result.serverTime, result.page.next);
    }
}

void EventTableModel::onRequestFailed(RequestId id, const core::Error &error) {
    if (id == 0 || (id != m_refreshId && id != m_fetchId)) {
        return;
    }
    noteAnswer();
    setIds(0, 0);
    Q_EMIT loadFailed(error.message);
}

void EventTableModel::noteAnswer() {
    m_search.answered = true;
    m_search.tookMs = m_search.sent.isValid() ? m_search.sent.elapsed() : 0;
    m_search.answerAt.start();
}

void EventTableModel::applySnapshot(const QList<core::OutboxEvent> &rows,
                                    const QDateTime &serverTime,
                                    const std::optional<store::PageCursor> &next) {
    setServerTime(serverTime);
    m_latest = rows;
    QList<core::OutboxEvent> shown = rows;
    int held = 0;
    if (m_holdNewRows && !m_rows.isEmpty()) {
        QSet<QUuid> loaded;
        loaded.reserve(m_rows.size());
        for (const auto &row : std::as_const(m_rows)) {
            loaded.insert(row.id);
        }
        held = int(shown.removeIf(
            [&loaded](const core::OutboxEvent &e) { return !loaded.contains(e.id); }));
    }
    applyRows(
        m_rows, shown, [](const core::OutboxEvent &e) { return e.id; },
        [](const core::OutboxEvent &a, const core::OutboxEvent &b) { return a == b; });
    m_next = next;
    setHeldRows(held);
    Q_EMIT refreshed();
}

void EventTableModel::setHoldNewRows(bool hold) {
    if (hold == m_holdNewRows) {
        return;
    }
    m_holdNewRows = hold;
    if (!hold) {
        showHeldRows();
    }
}

void EventTableModel::showHeldRows() {
    if (m_heldRows == 0) {
        return;
    }
    applyRows(
        m_rows, m_latest, [](const core::OutboxEvent &e) { return e.id; },
        [](const core::OutboxEvent &a, const core::OutboxEvent &b) { return a == b; });
    setHeldRows(0);
}

void EventTableModel::setHeldRows(int count) {
    if (count != m_heldRows) {
        m_heldRows = count;
        Q_EMIT heldRowsChanged(count);
    }
}

void EventTableModel::appendPage(const QList<core::OutboxEvent> &rows, const QDateTime &serverTime,
                                 const std::optional<store::PageCursor> &next) {
    setServerTime(serverTime);
    QSet<QUuid> loaded;
    loaded.reserve(m_rows.size());
    for (const auto &row : std::as_const(m_rows)) {
        loaded.insert(row.id);
    }
    QList<core::OutboxEvent> fresh;
    for (const auto &row : rows) {
        // A row can show up twice when it moved between pages meanwhile.
        if (!loaded.contains(row.id)) {
            loaded.insert(row.id);
            fresh.append(row);
        }
    }
    if (!fresh.isEmpty()) {
        const int first = int(m_rows.size());
        beginInsertRows({}, first, first + int(fresh.size()) - 1);
        m_rows.append(fresh);
        endInsertRows();
        if (m_heldRows > 0) {
            m_latest.append(fresh); // so that showing the held rows keeps these
        }
    }
    m_next = next;
}

void EventTableModel::clear() {
    beginResetModel();
    m_rows.clear();
    m_next.reset();
    endResetModel();
    m_latest.clear();
    setHeldRows(0);
    setIds(0, 0);
}

int EventTableModel::rowOf(const QUuid &id) const {
    for (qsizetype i = 0; i < m_rows.size(); ++i) {
        if (m_rows.at(i).id == id) {
            return int(i);
        }
    }
    return -1;
}

void EventTableModel::setServerTime(const QDateTime &serverTime) {
    m_serverTime = serverTime;
    m_sinceSnapshot.start();
    if (m_clockRunning && !m_clock.isActive()) {
        m_clock.start();
    }
}

QDateTime EventTableModel::serverNow() const {
    if (!m_serverTime.isValid()) {
        return QDateTime::currentDateTimeUtc();
    }
    return m_serverTime.addMSecs(m_sinceSnapshot.elapsed());
}

void EventTableModel::setClockRunning(bool running) {
    m_clockRunning = running;
    if (!running) {
        m_clock.stop();
    } else if (m_serverTime.isValid()) {
        m_clock.start();
    }
}

void EventTableModel::tick() {
    if (m_rows.isEmpty()) {
        return;
    }
    const int last = int(m_rows.size()) - 1;
    const QList<int> roles{Qt::DisplayRole, Qt::ToolTipRole, Qt::ForegroundRole, Qt::BackgroundRole,
                           LeaseExpiredRole};
    Q_EMIT dataChanged(index(0, NextAttemptColumn), index(last, LeaseRemainingColumn), roles);
    Q_EMIT dataChanged(index(0, CreatedColumn), index(last, CreatedColumn), roles);
}

int EventTableModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

bool EventTableModel::leaseExpired(const core::OutboxEvent &event, const QDateTime &now) const {
    return event.status == core::Status::Processing && event.lockedUntil.isValid() &&
           event.lockedUntil < now;
}

QVariant EventTableModel::display(const core::OutboxEvent &e, int column,
                                  const QDateTime &now) const {
    switch (column) {
    case IdColumn:
        return core::uuidText(e.id);
    case StatusColumn:
        if (e.status == core::Status::Pending && e.attempts > 0) {
            return tr("retrying");
        }
        return core::statusName(e.status);
    case NamespaceColumn:
        return e.nameSpace;
    case TopicColumn:
        return e.topic;
    case TenantColumn:
        return e.tenantId ? core::uuidText(*e.tenantId) : QString();
    case DedupeKeyColumn:
        return e.dedupeKey.value_or(QString());
    case AttemptsColumn:
        return e.attempts;
    case NextAttemptColumn:
        // Only a pending row is waiting for its next attempt.
        return e.status == core::Status::Pending ? formatRelativeTime(e.nextAttemptAt, now)
                                                 : QString();
    case LeaseHolderColumn:
        return e.lockedBy ? shortId(*e.lockedBy) : QString();
    case LeaseRemainingColumn:
        if (e.status != core::Status::Processing || !e.lockedUntil.isValid()) {
            return QString();
        }
        if (leaseExpired(e, now)) {
            return tr("expired %1").arg(formatRelativeTime(e.lockedUntil, now));
        }
        return formatRelativeTime(e.lockedUntil, now);
    case LastErrorColumn:
        return e.lastError ? firstLine(*e.lastError) : QString();
    case CreatedColumn:
        return formatRelativeTime(e.createdAt, now);
    default:
        return {};
    }
}

QVariant EventTableModel::toolTip(const core::OutboxEvent &e, int column,
                                  const QDateTime &now) const {
    switch (column) {
    case NextAttemptColumn:
        return e.status == core::Status::Pending ? formatAbsoluteTime(e.nextAttemptAt) : QVariant();
    case LeaseHolderColumn:
        return e.lockedBy ? core::uuidText(*e.lockedBy) : QVariant();
    case LeaseRemainingColumn:
        if (e.status != core::Status::Processing || !e.lockedUntil.isValid()) {
            return {};
        }
        return (leaseExpired(e, now) ? tr("Lease expired at %1; any dispatcher may reclaim it.")
                                     : tr("Leased until %1"))
            .arg(formatAbsoluteTime(e.lockedUntil));
    case LastErrorColumn:
        return e.lastError ? e.lastError->left(2000) : QVariant();
    case CreatedColumn:
        return formatAbsoluteTime(e.createdAt);
    case TenantColumn:
    case DedupeKeyColumn:
    case TopicColumn:
    case NamespaceColumn:
        return display(e, column, now);
    default:
        return {};
    }
}

QVariant EventTableModel::raw(const core::OutboxEvent &e, int column) const {
    switch (column) {
    case IdColumn:
        return e.id;
    case StatusColumn:
        return core::statusName(e.status);
    case TenantColumn:
        return e.tenantId ? QVariant(*e.tenantId) : QVariant();
    case AttemptsColumn:
        return e.attempts;
    case NextAttemptColumn:
        return e.nextAttemptAt;
    case LeaseHolderColumn:
        return e.lockedBy ? QVariant(*e.lockedBy) : QVariant();
    case LeaseRemainingColumn:
        return e.lockedUntil;
    case LastErrorColumn:
        return e.lastError ? QVariant(*e.lastError) : QVariant();
    case CreatedColumn:
        return e.createdAt;
    default:
        return display(e, column, serverNow());
    }
}

QVariant EventTableModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const core::OutboxEvent &e = m_rows.at(index.row());
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return display(e, column, serverNow());
    case Qt::ToolTipRole:
        return toolTip(e, column, serverNow());
    case Qt::TextAlignmentRole:
        if (column == AttemptsColumn) {
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        }
        return {};
    case Qt::ForegroundRole:
        if (column == LeaseRemainingColumn && leaseExpired(e, serverNow())) {
            return QBrush(QColor(0x9c, 0x00, 0x06));
        }
        return {};
    case Qt::BackgroundRole:
        if (column == LeaseRemainingColumn && leaseExpired(e, serverNow())) {
            return QBrush(QColor(0xff, 0xc7, 0xce));
        }
        return {};
    case IdRole:
        return e.id;
    case EventRole:
        return QVariant::fromValue(e);
    case RawRole:
        return raw(e, column);
    case LeaseExpiredRole:
        return leaseExpired(e, serverNow());
    default:
        return {};
    }
}

} // namespace outbox::console
