#pragma once

#include "console/model/consoletypes.h"
#include "console/model/snapshottablemodel.h"
#include "store/eventfilter.h"
#include "store/queries.h"

#include <QDateTime>
#include <QList>

namespace outbox::console {

// Failing events grouped by normalised error signature (ids and numbers
// folded), most frequent first. Takes ErrorGroupsResult snapshots and
// applies the difference (groups matched by signature), so a selected group
// stays selected across refreshes.
class ErrorGroupModel final : public SnapshotTableModel {
    Q_OBJECT

public:
    enum Column { SignatureColumn, CountColumn, LatestColumn, ColumnCount };
    enum Role {
        SignatureRole = Qt::UserRole + 1, // QString
        FilterRole, // store::EventFilter: the snapshot's filter narrowed to this group
        CountRole,  // qint64
        ExampleRole // QString: one full error of the group
    };

    explicit ErrorGroupModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(ErrorGroupModel)

    void applySnapshot(const ErrorGroupsResult &result);
    void clear();

    const QList<store::ErrorGroup> &groups() const { return m_groups; }
    // The last snapshot's figures: kinds, events grouped, sampled, stale
    // (its groups are groups()).
    const store::ErrorGroupSet &summary() const { return m_summary; }
    const QDateTime &serverTime() const { return m_serverTime; }
    int rowOf(const QString &signature) const; // -1 when absent
    qint64 totalCount() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

private:
    QList<store::ErrorGroup> m_groups;
    store::ErrorGroupSet m_summary;
    store::EventFilter m_filter;
    QDateTime m_serverTime;
};

} // namespace outbox::console
