#pragma once

#include <QHash>
#include <QList>
#include <QSet>

#include <functional>
#include <type_traits>

namespace outbox::console {

// The model's row notifications, bound by the model (they are protected
// members of QAbstractItemModel, so the model passes lambdas).
struct RowSignals {
    std::function<void(int first, int last)> beginRemove;
    std::function<void()> endRemove;
    std::function<void(int first, int last)> beginInsert;
    std::function<void()> endInsert;
    std::function<void(int from, int to)> beginMove; // row `from` moves before row `to`
    std::function<void()> endMove;
    std::function<void(int row)> changed;
};

struct DiffStats {
    int removed = 0;
    int inserted = 0;
    int moved = 0;
    int changed = 0;
};

// Turns `rows` into `next` with the fewest row notifications, matching rows
// by key: rows that are gone are removed in contiguous runs, new rows are
// inserted in contiguous runs, rows that stay keep their identity (so
// selections and persistent indexes follow them) and get one changed() each
// when their value differs. A row that changed position is moved. Duplicate
// keys in `next` keep their first occurrence.
template <typename T, typename KeyFn, typename EqualFn>
DiffStats applyKeyedDiff(QList<T> &rows, const QList<T> &next, KeyFn keyOf, EqualFn equal,
                         const RowSignals &notify) {
    using Key = std::decay_t<decltype(keyOf(next.front()))>;
    DiffStats stats;

    QList<T> target;
    target.reserve(next.size());
    QSet<Key> targetKeys;
    targetKeys.reserve(next.size());
    for (const T &item : next) {
        const Key key = keyOf(item);
        if (!targetKeys.contains(key)) {
            targetKeys.insert(key);
            target.append(item);
        }
    }

    // Removals, from the bottom so earlier indexes stay valid.
    for (qsizetype i = rows.size() - 1; i >= 0;) {
        if (targetKeys.contains(keyOf(rows.at(i)))) {
            --i;
            continue;
        }
        const qsizetype last = i;
        while (i > 0 && !targetKeys.contains(keyOf(rows.at(i - 1)))) {
            --i;
        }
        notify.beginRemove(int(i), int(last));
        rows.remove(i, last - i + 1);
        notify.endRemove();
        stats.removed += int(last - i + 1);
        --i;
    }

    QSet<Key> present;
    present.reserve(rows.size());
    for (const T &row : std::as_const(rows)) {
        present.insert(keyOf(row));
    }

    for (qsizetype i = 0; i < target.size();) {
        const Key key = keyOf(target.at(i));
        if (i < rows.size() && keyOf(rows.at(i)) == key) {
            if (!equal(rows.at(i), target.at(i))) {
                rows[i] = target.at(i);
                notify.changed(int(i));
                ++stats.changed;
            }
            ++i;
            continue;
        }
        if (!present.contains(key)) {
            qsizetype end = i + 1;
            while (end < target.size() && !present.contains(keyOf(target.at(end)))) {
                ++end;
            }
            notify.beginInsert(int(i), int(end - 1));
            for (qsizetype j = i; j < end; ++j) {
                rows.insert(j, target.at(j));
                present.insert(keyOf(target.at(j)));
            }
            notify.endInsert();
            stats.inserted += int(end - i);
            i = end;
            continue;
        }
        // Present further down: the order changed, move it up here.
        qsizetype from = i + 1;
        while (keyOf(rows.at(from)) != key) {
            ++from;
        }
        notify.beginMove(int(from), int(i));
        rows.move(from, i);
        notify.endMove();
        ++stats.moved;
        if (!equal(rows.at(i), target.at(i))) {
            rows[i] = target.at(i);
            notify.changed(int(i));
            ++stats.changed;
        }
        ++i;
    }
    return stats;
}

} // namespace outbox::console
