#pragma once

#include "console/model/databasesettings.h"

#include <QDialog>

class QCheckBox;
class QDoubleSpinBox;
class QSpinBox;

namespace outbox::console {

// The alert thresholds of one database (AlertThresholds, kept by
// DatabaseSettings). Every field has a label with an access key, Tab walks
// them in reading order, Enter accepts and Escape cancels; zero turns an
// alert off. `target` names the database in the title; `channel` says where
// desktop notifications go (DesktopNotifier::channelDescription), and
// without `canNotify` the notifications box is disabled (its setting kept).
class AlertSettingsDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AlertSettingsDialog)

public:
    AlertSettingsDialog(const AlertThresholds &thresholds, const QString &target,
                        const QString &channel, bool canNotify, QWidget *parent = nullptr);

    // What was entered; what the dialog does not show is as given.
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
