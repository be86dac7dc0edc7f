#pragma once

#include "console/model/consoletypes.h"
#include "console/model/snapshottablemodel.h"
#include "console/model/storeclient.h"
#include "core/duration.h"
#include "core/event.h"
#include "store/eventfilter.h"
#include "store/queries.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QList>
#include <QPointer>
#include <QTimer>
#include <QUuid>

#include <optional>

namespace outbox::console {

// The live event table. It holds value snapshots only and turns each new
// snapshot into the minimal row changes (rows matched by id), so a view's
// selection and scroll position survive refreshes.
//
// With a StoreClient it loads itself: setQuery() loads the first page,
// fetchMore() the next one (keyset cursor), refresh() re-reads the rows
// already loaded (capped at m_refreshCap) and diffs them in. Without a
// client it just shows what applySnapshot()/appendPage() give it.
//
// Relative times ("in 12s", "3m ago") are computed from the database clock
// delivered with each snapshot plus the time elapsed since, so a skewed
// local clock does not matter; they tick once a second.
class EventTableModel final : public SnapshotTableModel {
    Q_OBJECT

public:
    enum Column {
        IdColumn,
        StatusColumn,
        NamespaceColumn,
        TopicColumn,
        TenantColumn,
        DedupeKeyColumn,
        AttemptsColumn,
        NextAttemptColumn,
        LeaseHolderColumn,
        LeaseRemainingColumn,
        LastErrorColumn,
        CreatedColumn,
        ColumnCount
    };
    enum Role {
        IdRole = Qt::UserRole + 1, // QUuid
        EventRole,                 // core::OutboxEvent
        RawRole,                   // the column's unformatted value (QDateTime, int, ...)
        LeaseExpiredRole,          // bool: processing with a lease in the past
    };

    explicit EventTableModel(QObject *parent = nullptr);
    ~EventTableModel() override;
    Q_DISABLE_COPY_MOVE(EventTableModel)

    void setClient(StoreClient *client);
    StoreClient *client() const { return m_client; }

    // A new query resets the model (a different set of rows) and loads the
    // first page when a client is set.
    void setQuery(const store::EventFilter &filter,
                  store::SortOrder order = store::SortOrder::NewestFirst);
    const store::EventFilter &filter() const { return m_filter; }
    store::SortOrder order() const { return m_order; }

    void setPageSize(int rows);
    int pageSize() const { return m_pageSize; }

    // Re-reads the loaded window and applies the difference. Supersedes a
    // refresh or fetch still in flight.
    //
    // A search the indexes cannot answer (EventFilter::needsScan()) is
    // bounded by searchTimeout() and not re-read blindly: after it stopped
    // at the bound, only a new query runs it again; otherwise it is re-read
    // at most every 20 times as long as it took (5% of the database's time).
    void refresh();
    bool isLoading() const { return m_refreshId != 0 || m_fetchId != 0; }
    // Whether the current query has been answered at least once (rows, no
    // rows, an error or a stop).
    bool hasAnswer() const { return m_search.answered; }
    // Set when the current search stopped at searchTimeout().
    bool searchStopped() const { return m_search.stopped; }
    void setSearchTimeout(core::Millis timeout) { m_searchTimeout = timeout; }
    core::Millis searchTimeout() const { return m_searchTimeout; }

    // While held, snapshots bring no new rows in (changed and vanished rows
    // still apply), so the rows on screen stay where they are; heldRows()
    // counts the new ones that wait. Releasing the hold, or showHeldRows(),
    // applies the latest snapshot whole.
    void setHoldNewRows(bool hold);
    bool holdsNewRows() const { return m_holdNewRows; }
    int heldRows() const { return m_heldRows; }
    void showHeldRows();

    // Snapshot side. `serverTime` is the database clock when the rows were
    // read; `next` is where the following page starts (none: the end).
    void applySnapshot(const QList<core::OutboxEvent> &rows, const QDateTime &serverTime,
                       const std::optional<store::PageCursor> &next = std::nullopt);
    void appendPage(const QList<core::OutboxEvent> &rows, const QDateTime &serverTime,
                    const std::optional<store::PageCursor> &next);
    void clear();

    const core::OutboxEvent &eventAt(int row) const { return m_rows.at(row); }
    const QList<core::OutboxEvent> &events() const { return m_rows; }
    int rowOf(const QUuid &id) const; // -1 when not loaded
    const std::optional<store::PageCursor> &nextCursor() const { return m_next; }
    // The database clock now, as far as the last snapshot tells.
    QDateTime serverNow() const;

    // The once-a-second repaint of relative times (on by default).
    void setClockRunning(bool running);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

Q_SIGNALS:
    void loadingChanged(bool loading);
    void loadFailed(const QString &message);
    // A refresh or the first page was applied (not emitted for appended pages).
    void refreshed();
    void heldRowsChanged(int count);

private:
    void onPageReady(RequestId id, const PageResult &result);
    void onRequestFailed(RequestId id, const core::Error &error);
    void noteAnswer();
    void setServerTime(const QDateTime &serverTime);
    void setHeldRows(int count);
    void tick();
    void setIds(RequestId refreshId, RequestId fetchId);
    bool leaseExpired(const core::OutboxEvent &event, const QDateTime &now) const;
    QVariant display(const core::OutboxEvent &event, int column, const QDateTime &now) const;
    QVariant toolTip(const core::OutboxEvent &event, int column, const QDateTime &now) const;
    QVariant raw(const core::OutboxEvent &event, int column) const;

    QPointer<StoreClient> m_client;
    QString m_laneKey;
    store::EventFilter m_filter;
    store::SortOrder m_order = store::SortOrder::NewestFirst;
    int m_pageSize = 200;
    // refresh() re-reads at most this many rows; rows beyond it are dropped
    // (fetchMore brings them back).
    int m_refreshCap = 2000;
    QList<core::OutboxEvent> m_rows;
    std::optional<store::PageCursor> m_next;
    bool m_holdNewRows = false;
    int m_heldRows = 0;
    QList<core::OutboxEvent> m_latest; // the last snapshot, held rows included
    RequestId m_refreshId = 0;
    RequestId m_fetchId = 0;
    QDateTime m_serverTime;
    QElapsedTimer m_sinceSnapshot;
    QTimer m_clock;
    bool m_clockRunning = true;
    // The cost of the current query, to pace its live re-reads.
    struct SearchState {
        bool answered = false;
        bool stopped = false;
        qint64 tookMs = 0;
        QElapsedTimer sent;     // the request in flight
        QElapsedTimer answerAt; // the last answer
    };
    SearchState m_search;
    core::Millis m_searchTimeout{2000};
};

} // namespace outbox::console
