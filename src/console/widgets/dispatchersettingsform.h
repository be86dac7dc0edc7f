#pragma once

#include "core/dispatcherconfig.h"

#include <QHash>
#include <QWidget>

class QComboBox;
class QCheckBox;
class QLabel;
class QLineEdit;
class QSettings;
class QSpinBox;

namespace outbox::console {

// The dispatcher panel's settings form: runner URL, secret (masked, memory
// only), concurrency, batch size, lease, poll interval, backoff base/max,
// max attempts, request timeout, the delivery (per event, or in batches
// with their bounds), and a routes file (README, "Routing") that delivers
// to several destinations instead of the runner URL. Every edit is validated with
// core::DispatcherConfig::validate(); the message names the form's field
// (not the command-line flag), is shown in red under the form, and the field
// gets a red border. Valid values are written to QSettings (group
// "dispatcher") unless persistence is off; the secret and the user name and
// password of the runner URL never are (they stay in memory for the session).
class DispatcherSettingsForm final : public QWidget {
    Q_OBJECT
public:
    // `settings` may be null (nothing is persisted). It must outlive the form.
    explicit DispatcherSettingsForm(QSettings *settings = nullptr, QWidget *parent = nullptr);
    ~DispatcherSettingsForm() override;
    Q_DISABLE_COPY_MOVE(DispatcherSettingsForm)

    // Fills the form. Fields it does not show (shutdown grace, permanent
    // statuses, bearer token, namespace, ...) are kept and carried into
    // config(). persist = false stops all writes to QSettings from now on.
    void setConfig(const core::DispatcherConfig &config, bool persist = true);
    core::DispatcherConfig config() const; // as entered; check validationError()
    QString validationError() const;       // empty when valid
    bool isValid() const { return validationError().isEmpty(); }

Q_SIGNALS:
    // The user changed a field; validation has already run.
    void edited();

private:
    enum class Field {
        RunnerUrl,
        Secret,
        Concurrency,
        BatchSize,
        Lease,
        PollInterval,
        BaseDelay,
        MaxDelay,
        MaxAttempts,
        RequestTimeout,
        Delivery,
        BatchMaxEvents,
        BatchMaxBytes,
        RoutesFile,
    };

    QLineEdit *durationField(Field field) const;
    QString routesError() const; // the routes file's problems, with their lines
    void enableBatchBounds();    // the bounds only matter for batch delivery
    void validate();
    void load();
    void save();

    QSettings *m_settings = nullptr;
    bool m_persist = true;
    bool m_loading = false;   // filling the form: do not write back
    bool m_urlEdited = false; // the user typed in the runner URL field
    core::DispatcherConfig m_hidden;
    QHash<Field, QWidget *> m_fields;
    QLineEdit *m_runnerUrl = nullptr;
    QLineEdit *m_secret = nullptr;
    QSpinBox *m_concurrency = nullptr;
    QSpinBox *m_batchSize = nullptr;
    QSpinBox *m_maxAttempts = nullptr;
    QComboBox *m_delivery = nullptr;
    QSpinBox *m_batchMaxEvents = nullptr;
    QSpinBox *m_batchMaxBytes = nullptr;
    QCheckBox *m_aggregateOrder = nullptr;
    QLineEdit *m_routesFile = nullptr; // a routes file: several destinations instead of the URL
    QLabel *m_validation = nullptr;
};

} // namespace outbox::console
