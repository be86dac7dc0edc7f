#pragma once

#include "core/result.h"
#include "store/queries.h"

#include <QElapsedTimer>
#include <QList>
#include <QSqlDatabase>
#include <QSqlQuery>

#include <optional>

namespace outbox::store {

// Live and dead counts per namespace/topic: reads every pending, processing
// and dead row's entry in their partial indexes.
core::Result<QList<TopicCount>> topicCounts(QSqlDatabase db, const QString &context);

// Pending events held back by an earlier unfinished event of their
// aggregate (StatusCounts::blocked): reads every pending event that has one.
core::Result<qint64> blockedCount(QSqlDatabase db, const QString &context);

// The breakdown of `counts`: its topics (topicCounts) and blocked
// (blockedCount), the parts that read every live row.
core::Result<void> countBreakdown(QSqlDatabase db, const QString &context, StatusCounts &counts);

// The next_attempt_at of the oldest due event that is not paused, as a
// scalar subquery (StatusCounts::oldestDueAt): the head of the due index.
QString oldestDueSql();

// The created_at of the oldest pending event, held or not, as a scalar
// expression (StatusCounts::oldestPendingAt).
QString oldestPendingSql();

// Whether work that took `tookMs` when it last ran, `since` ago, may run
// again and still take no more than `dutyCycle` of the wall time (the rule
// of LiveCounts' breakdown and of ErrorGroupWatch's grouping).
bool dutyCycleAllows(const QElapsedTimer &since, qint64 tookMs, double dutyCycle);

// The status counts statement is written twice (EventQueries::counts exactly,
// LiveCounts capped); these keep the columns they share in one place. The
// first four columns are pending, retrying, processing and expired leases;
// the sixth and seventh the delivered count up to `LIMIT ?` and the
// planner's estimate. Column five (dead) is each caller's own.
QString liveCountsSql();
QString cappedDeliveredSql();
// A count that stopped after `cap` + 1 rows: exact within the cap, else
// `estimate` (the planner's, or an older full count), never below what was
// counted. The caller marks it estimated when `counted > cap`. The one rule
// of LiveCounts' delivered and dead and of the fleet's counts.
qint64 cappedValue(qint64 counted, qint64 cap, qint64 estimate);
// Reads those columns of `row` into `counts`; delivered beyond `cap` is the
// estimate, marked deliveredEstimated. Returns the capped delivered count.
qint64 readStatusColumns(const QSqlQuery &row, qint64 cap, StatusCounts &counts);

// Counts for a view that asks again every few seconds (the console's
// navigator and tabs), at a cost that does not grow with the table.
//
// Every refresh reads the cheap part exactly: pending, retrying, processing
// and expired leases (small partial indexes), delivered and dead up to
// `exactCap` rows each, and the table's change counter (inserted + updated +
// deleted rows, pg_stat_get_tuples_*), and the oldest due event (the head of
// the due index). The breakdown per namespace/topic, the events blocked by
// their aggregate, and dead beyond the cap, read every live and dead row: they run again only when
// something changed since their last run, and then no more than `dutyCycle`
// of the wall time (a breakdown that took 2 s runs at most every 100 s at 2%).
// In between the last breakdown is shown, marked estimated
// (StatusCounts::topicsEstimated, deadEstimated) when something changed since.
//
// PostgreSQL publishes the change counter within a few seconds of a commit;
// changes to the exactly counted sets are seen at once, except on a table
// that has not changed for `quietAfterMs`: there the pending, retrying,
// delivered and dead counts are read again only when the counter moves
// (processing, expired leases and the oldest events are read every time). See
// docs/DECISIONS.md, "Counts that an idle console can afford".
class LiveCounts final {
public:
    struct Options {
        qint64 exactCap = 10000; // delivered and dead are counted exactly up to this
        double dutyCycle = 0.02; // share of the wall time the breakdown may take
        // Once the change counter has stood still this long (PostgreSQL
        // publishes a backend's changes within 10 s at the latest), a refresh
        // first reads only the counter and the exact cheap columns, and
        // counts the rest again only when the counter moved.
        qint64 quietAfterMs = 12000;
    };

    LiveCounts();
    explicit LiveCounts(Options options);
    Q_DISABLE_COPY_MOVE(LiveCounts)

    // Uses `db` in the caller's thread.
    core::Result<StatusCounts> refresh(QSqlDatabase db);
    const Options &options() const { return m_options; }
    // Forget the last breakdown and counts: the next refresh runs both.
    void reset() {
        m_breakdown.reset();
        m_last.reset();
    }
    // How many refreshes counted pending, retrying, delivered and dead
    // (the rest found the table unchanged and kept the last figures).
    qint64 fullCounts() const { return m_fullCounts; }

private:
    // What the cheap query saw; a different marker means the table changed.
    struct Marker {
        qint64 changes = 0;
        qint64 pending = 0;
        qint64 retrying = 0;
        qint64 processing = 0;
        qint64 deadCapped = 0;
        qint64 deliveredCapped = 0;
        friend bool operator==(const Marker &, const Marker &) = default;
    };
    struct Breakdown {
        Marker marker; // as seen right before the breakdown ran
        QList<TopicCount> topics;
        qint64 dead = 0;
        qint64 blocked = 0;
        QDateTime at; // server time of the breakdown
        qint64 tookMs = 0;
        QElapsedTimer since;
    };

    // The last full count, and since when its change counter stands still.
    struct Last {
        StatusCounts counts;
        Marker marker;
        QElapsedTimer stillSince;
    };

    core::Result<std::optional<StatusCounts>> quietRefresh(QSqlDatabase db, const QString &context);
    core::Result<StatusCounts> fullRefresh(QSqlDatabase db, const QString &context);
    void applyBreakdown(const Marker &marker, qint64 deadCapped, StatusCounts &counts) const;

    Options m_options;
    std::optional<Breakdown> m_breakdown;
    std::optional<Last> m_last;
    qint64 m_fullCounts = 0;
};

} // namespace outbox::store
