#pragma once

#include "console/model/databasesettings.h"

#include <QDialog>

class QCheckBox;
class QDoubleSpinBox;
class QSpinBox;

namespace outbox::console {

// The alert thresholds of one database (AlertThresholds, kept by
// DatabaseSettings): every field has a label with an access key, Tab walks
// them in reading order, Enter accepts and Escape cancels. Zero turns an
// alert off.
class AlertSettingsDialog final : public QDialog {
    Q_OBJECT

public:
    // `target` names the database in the title ("orders on db1").
    AlertSettingsDialog(const AlertThresholds &thresholds, const QString &target,
                        QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(AlertSettingsDialog)

    AlertThresholds thresholds() const;

private:
    AlertThresholds m_initial; // what the dialog does not show is kept
    QSpinBox *m_dueAge;
    QSpinBox *m_dueFor;
    QDoubleSpinBox *m_deaths;
    QSpinBox *m_unclaimed;
    QCheckBox *m_connectionLost;
    QCheckBox *m_notify;
};

} // namespace outbox::console
