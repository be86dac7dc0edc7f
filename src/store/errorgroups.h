#pragma once

#include "core/result.h"
#include "store/eventfilter.h"
#include "store/queries.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QSqlDatabase>

#include <optional>

namespace outbox::store {

// Groups the last errors of the events `filter` selects (dead ones when it
// names no status; see EventQueries::errorGroups) by errorSignature(), from
// the newest `sample` of them (created_at order, the partial indexes' order).
core::Result<ErrorGroupSet> groupErrors(QSqlDatabase db, const EventFilter &filter, int limit,
                                        int sample = kErrorGroupSample);

// Error groups for a view that asks again every few seconds (the console's
// "What is failing"), at a cost an idle database does not notice.
//
// Each refresh reads only the table's change counter (inserted + updated +
// deleted rows, pg_stat_get_tuples_*) and the clock. The grouping itself runs
// again only when the filter or the limit is new, or when the table changed
// since the last grouping, and then no more than `dutyCycle` of the wall
// time; in between the last grouping is returned, marked stale when the table
// has changed since. PostgreSQL publishes the change counter within a few
// seconds of a commit. See docs/DECISIONS.md, "Counts that an idle console
// can afford": the same rule as LiveCounts.
class ErrorGroupWatch final {
public:
    struct Options {
        int sample = kErrorGroupSample;
        double dutyCycle = 0.02; // share of the wall time the grouping may take
    };

    ErrorGroupWatch();
    explicit ErrorGroupWatch(Options options);
    Q_DISABLE_COPY_MOVE(ErrorGroupWatch)

    // Uses `db` in the caller's thread; `serverTime` is set to the database
    // clock of this refresh.
    core::Result<ErrorGroupSet> refresh(QSqlDatabase db, const EventFilter &filter, int limit,
                                        QDateTime &serverTime);
    // Forget the last grouping: the next refresh runs it.
    void reset() { m_last.reset(); }

private:
    struct Last {
        EventFilter filter;
        int limit = 0;
        qint64 changes = 0; // the change counter right before the grouping ran
        ErrorGroupSet set;
        qint64 tookMs = 0;
        QElapsedTimer since;
    };

    Options m_options;
    std::optional<Last> m_last;
};

// The change counter of outbox_events (inserted + updated + deleted rows
// since the statistics were reset), as a scalar subquery.
QString tableChangesSql();

} // namespace outbox::store
