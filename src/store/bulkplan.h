#pragma once

// The first half of an operator action (see OperatorStore): a snapshot of
// the rows it will work through, cut into batch windows, and the SQL
// pieces that select by the states the action may touch. Internal to the
// store library.

#include "store/eventfilter.h"
#include "store/operations.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>
#include <QVariantList>

namespace outbox::store {

// "('a', 'b')": the states `action` may touch, for "status IN ...".
// Constants from a closed set, not user values: written into the SQL text
// so that the planner can match the partial indexes (outbox_events_dead_idx,
// ...) whatever the plan cache does.
QString statesSql(Action action);

// `columns` of the rows matching `where` + `extra`, one SELECT per allowed
// state (two for pending: held events have an index of their own) joined
// with UNION ALL: each reads its own partial index in key order, where
// "status IN (a, b)" would make the planner scan the whole table.
// Parameters: the values of `where` + `extra`, once per SELECT
// (perStateValues).
QString perState(Action action, const QString &columns, const QString &where, const QString &extra);
QVariantList perStateValues(Action action, const QVariantList &values);

// One batch boundary: the key of the last row of a batch in the snapshot
// taken at the start, and its position there. Keys are kept as PostgreSQL
// text so that created_at keeps its microseconds (QDateTime has only ms).
struct WindowEnd {
    QString createdAt;
    QString id;
    qint64 position = 0;
};

struct BulkPlan {
    qint64 matched = 0;
    qint64 target = 0;          // matched, capped by the limit and the seal
    QString startedAt;          // rows changed after this are left alone (skipped)
    BulkSeal seal;              // the set worked through (a dry run's is what to confirm)
    qint64 newer = 0;           // sealed runs: matching rows outside the seal
    qint64 alreadyReplayed = 0; // replay: matched events that have a copy or are one
    QString replayedExample;    // one of them
    WindowEnd first;            // the first row: where the first batch starts (inclusive)
    QList<WindowEnd> windows;
    QList<QUuid> sample; // dry run
    // The filter as a condition on "e", its age pinned to the start; the
    // allowed states are added where used.
    QString where;
    QVariantList whereValues;

    // How many rows of window `w` matched at the start.
    qint64 windowRows(qsizetype w) const {
        return windows.at(w).position - (w > 0 ? windows.at(w - 1).position : 0);
    }
};

// One consistent snapshot: what matches now (within options.seal when
// given), where each batch of `batchSize` rows ends (or, for a dry run, a
// sample), and the moment after which a row counts as "moved meanwhile".
core::Result<BulkPlan> planBulk(QSqlDatabase db, Action action, const EventFilter &filter,
                                const BulkOptions &options, int batchSize);

} // namespace outbox::store
