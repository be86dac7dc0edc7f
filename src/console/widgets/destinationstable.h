#pragma once

#include "console/model/registrywatcher.h"

#include <QStringList>
#include <QTableWidget>

namespace outbox::console {

// The destinations of the routing dispatchers that are alive, one row each:
// name, dispatcher, kind, target, circuit (closed, open, half-open, or
// paused, with the reason), delivery rate, in flight and the last error.
// Its context menu pauses or resumes a destination (the Dispatchers dock
// asks why and does it). Hidden while no dispatcher routes.
class DestinationsTable final : public QTableWidget {
    Q_OBJECT
public:
    explicit DestinationsTable(QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(DestinationsTable)

    // Returns the open circuits, "name: reason" each (for the alert).
    QStringList showSnapshot(const RegistrySnapshot &snapshot);

Q_SIGNALS:
    void pauseRequested(const QString &destination);
    void resumeRequested(const QString &destination);

private:
    void showMenu(const QPoint &pos);

    QStringList m_paused;
};

} // namespace outbox::console
