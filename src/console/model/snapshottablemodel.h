#pragma once

#include "console/model/listdiff.h"

#include <QAbstractTableModel>
#include <QStringList>

namespace outbox::console {

// A flat table that takes its rows from snapshots: applyRows() turns the
// current rows into the next snapshot's with applyKeyedDiff() and this
// model's row notifications, so selections and persistent indexes follow
// the rows. A changed row is repainted in every column. The columns are the
// titles given, in the order of the model's Column enum.
class SnapshotTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

protected:
    SnapshotTableModel(QStringList columnTitles, QObject *parent);

    template <typename T, typename KeyFn, typename EqualFn>
    DiffStats applyRows(QList<T> &rows, const QList<T> &next, KeyFn keyOf, EqualFn equal) {
        return applyKeyedDiff(rows, next, keyOf, equal, rowSignals());
    }

private:
    RowSignals rowSignals();

    const QStringList m_titles;
};

} // namespace outbox::console
