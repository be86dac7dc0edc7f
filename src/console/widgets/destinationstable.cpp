#include "console/widgets/destinationstable.h"

#include "console/model/consoletypes.h"
#include "dispatch/routingreport.h"

#include <QHeaderView>
#include <QMenu>

namespace outbox::console {

namespace {

enum Column { Name, Dispatcher, Kind, Target, Circuit, Rate, InFlight, LastError, ColumnCount };

} // namespace

DestinationsTable::DestinationsTable(QWidget *parent)
    : QTableWidget(0, ColumnCount, parent) {
    setObjectName(QStringLiteral("destinationsTable"));
    setHorizontalHeaderLabels({tr("Destination"), tr("Dispatcher"), tr("Kind"), tr("Target"),
                               tr("Circuit"), tr("Delivered/s"), tr("In flight"),
                               tr("Last error")});
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    verticalHeader()->hide();
    horizontalHeader()->setStretchLastSection(true);
    setContextMenuPolicy(Qt::CustomContextMenu);
    connect(this, &QWidget::customContextMenuRequested, this, &DestinationsTable::showMenu);
    hide();
}

QStringList DestinationsTable::showSnapshot(const RegistrySnapshot &snapshot) {
    QStringList open;
    m_paused.clear();
    QHash<QString, const store::DestinationPause *> paused;
    for (const store::DestinationPause &pause : snapshot.destinationPauses) {
        paused.insert(pause.destination, &pause);
        m_paused << pause.destination;
    }
    setRowCount(0);
    for (const store::DispatcherEntry &entry : snapshot.dispatchers.entries) {
        if (!entry.alive || !snapshot.destinations.contains(entry.workerId))
            continue;
        const QList<dispatch::DestinationStats> destinations =
            dispatch::destinationsFromJson(snapshot.destinations.value(entry.workerId));
        for (const dispatch::DestinationStats &d : destinations) {
            const store::DestinationPause *pause = paused.value(d.name);
            QString circuit = d.circuit;
            QString why = d.reason;
            if (pause) {
                circuit = tr("paused");
                why = tr("paused by %1, %2: %3")
                          .arg(pause->pausedBy,
                               formatRelativeTime(pause->pausedAt, snapshot.dispatchers.serverTime),
                               pause->reason);
            } else if (d.circuit == QLatin1String("open")) {
                open << tr("%1: %2").arg(d.name, d.reason);
            }
            const QStringList texts{
                d.name,
                tr("%1 (pid %2)").arg(entry.host).arg(entry.pid),
                d.kind,
                d.target,
                why.isEmpty() ? circuit : tr("%1: %2").arg(circuit, why),
                QString::number(d.deliveredPerSecond, 'f', 1),
                d.queued > 0 ? tr("%1 / %2, %3 waiting").arg(d.inFlight).arg(d.limit).arg(d.queued)
                             : tr("%1 / %2").arg(d.inFlight).arg(d.limit),
                d.lastError};
            const int row = rowCount();
            insertRow(row);
            for (int column = 0; column < texts.size(); ++column) {
                auto *item = new QTableWidgetItem(texts.at(column));
                item->setToolTip(texts.at(column));
                if (column == Circuit && (pause || d.circuit != QLatin1String("closed")))
                    item->setForeground(QColor(QStringLiteral("#b35900")));
                setItem(row, column, item);
            }
        }
    }
    resizeColumnsToContents();
    setVisible(rowCount() > 0 || !m_paused.isEmpty());
    return open;
}

void DestinationsTable::showMenu(const QPoint &pos) {
    const QTableWidgetItem *item = itemAt(pos);
    if (!item)
        return;
    const QString name = this->item(item->row(), Name)->text();
    QMenu menu(this);
    QAction *pause = menu.addAction(tr("&Pause destination %1…").arg(name));
    pause->setObjectName(QStringLiteral("pauseDestinationAction"));
    QAction *resume = menu.addAction(tr("&Resume destination %1").arg(name));
    resume->setObjectName(QStringLiteral("resumeDestinationAction"));
    resume->setEnabled(m_paused.contains(name));
    QAction *chosen = menu.exec(viewport()->mapToGlobal(pos));
    if (chosen == pause)
        Q_EMIT pauseRequested(name);
    else if (chosen == resume)
        Q_EMIT resumeRequested(name);
}

} // namespace outbox::console
