#include "console/widgets/dispatchersettingsform.h"

#include "core/displaytext.h"
#include "core/duration.h"
#include "core/routes.h"
#include "dispatch/routingdestinations.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>
#include <utility>

namespace outbox::console {

namespace {

QLineEdit *durationEdit(const QString &objectName, const QString &placeholder) {
    auto *edit = new QLineEdit;
    edit->setObjectName(objectName);
    edit->setPlaceholderText(placeholder);
    edit->setToolTip(QObject::tr("A duration such as 500ms, 30s, 5m or 1h30m."));
    return edit;
}

QSpinBox *countSpin(const QString &objectName, int min, int max) {
    auto *spin = new QSpinBox;
    spin->setObjectName(objectName);
    spin->setRange(min, max);
    spin->setAccelerated(true);
    return spin;
}

} // namespace

DispatcherSettingsForm::DispatcherSettingsForm(QSettings *settings, QWidget *parent)
    : QWidget(parent)
    , m_settings(settings) {
    m_runnerUrl = new QLineEdit;
    m_runnerUrl->setObjectName(QStringLiteral("runnerUrl"));
    m_runnerUrl->setPlaceholderText(QStringLiteral("http://localhost:8080/events"));
    m_runnerUrl->setMinimumWidth(240);
    m_secret = new QLineEdit;
    m_secret->setObjectName(QStringLiteral("secret"));
    m_secret->setEchoMode(QLineEdit::Password);
    m_secret->setPlaceholderText(tr("whsec_… (empty: unsigned)"));
    m_secret->setToolTip(tr("Standard Webhooks secret(s), separated by spaces while rotating. "
                            "Kept in memory only, never saved."));
    m_concurrency = countSpin(QStringLiteral("concurrency"), 1, 4096);
    m_batchSize = countSpin(QStringLiteral("batchSize"), 1, 10000);
    m_maxAttempts = countSpin(QStringLiteral("maxAttempts"), 1, 1000);
    auto *lease = durationEdit(QStringLiteral("lease"), QStringLiteral("30s"));
    auto *poll = durationEdit(QStringLiteral("pollInterval"), QStringLiteral("1s"));
    auto *base = durationEdit(QStringLiteral("baseDelay"), QStringLiteral("1s"));
    auto *maxDelay = durationEdit(QStringLiteral("maxDelay"), QStringLiteral("5m"));
    auto *timeout = durationEdit(QStringLiteral("requestTimeout"), QStringLiteral("10s"));
    m_delivery = new QComboBox;
    m_delivery->setObjectName(QStringLiteral("delivery"));
    m_delivery->addItem(tr("Per event"), core::deliveryName(core::Delivery::PerEvent));
    m_delivery->addItem(tr("Batch"), core::deliveryName(core::Delivery::Batch));
    m_delivery->setToolTip(tr("Batch: many events per request, for runners that accept the "
                              "batch format (docs/RUNNER-CONTRACT.md)."));
    m_batchMaxEvents = countSpin(QStringLiteral("batchMaxEvents"), 1, 100000);
    m_batchMaxBytes = countSpin(QStringLiteral("batchMaxBytes"), 1, 1 << 30);
    m_batchMaxBytes->setSingleStep(1024);
    m_batchMaxBytes->setSuffix(tr(" bytes"));
    m_aggregateOrder = new QCheckBox(tr("One at a time per aggregate, oldest first"));
    m_aggregateOrder->setObjectName(QStringLiteral("aggregateOrder"));
    m_aggregateOrder->setToolTip(
        tr("Events with the same aggregate type and id are delivered one at a time in the "
           "order they were created; an event waits while an earlier one of its aggregate is "
           "pending, processing or dead (outboxctl dispatch --ordering aggregate). The "
           "database needs it turned on once: outboxctl migrate --aggregate-order."));
    m_routesFile = new QLineEdit;
    m_routesFile->setObjectName(QStringLiteral("routesFile"));
    m_routesFile->setPlaceholderText(tr("none: every event to the runner URL"));
    m_routesFile->setToolTip(tr("A routes file (README, \"Routing\"; check it with outboxctl "
                                "routes check FILE): events go to several destinations by "
                                "namespace and topic, instead of the runner URL."));
    m_fields = {
        {Field::RoutesFile, m_routesFile},
        {Field::RunnerUrl, m_runnerUrl},
        {Field::Secret, m_secret},
        {Field::Concurrency, m_concurrency},
        {Field::BatchSize, m_batchSize},
        {Field::Lease, lease},
        {Field::PollInterval, poll},
        {Field::BaseDelay, base},
        {Field::MaxDelay, maxDelay},
        {Field::MaxAttempts, m_maxAttempts},
        {Field::RequestTimeout, timeout},
        {Field::Delivery, m_delivery},
        {Field::BatchMaxEvents, m_batchMaxEvents},
        {Field::BatchMaxBytes, m_batchMaxBytes},
    };

    auto *form = new QFormLayout;
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Runner URL"), m_runnerUrl);
    form->addRow(tr("Secret"), m_secret);
    form->addRow(tr("Concurrency"), m_concurrency);
    form->addRow(tr("Batch size"), m_batchSize);
    form->addRow(tr("Lease"), lease);
    form->addRow(tr("Poll interval"), poll);
    form->addRow(tr("Backoff base"), base);
    form->addRow(tr("Backoff max"), maxDelay);
    form->addRow(tr("Max attempts"), m_maxAttempts);
    form->addRow(tr("Request timeout"), timeout);
    form->addRow(tr("Delivery"), m_delivery);
    form->addRow(tr("Batch max events"), m_batchMaxEvents);
    form->addRow(tr("Batch max bytes"), m_batchMaxBytes);
    form->addRow(tr("Ordering"), m_aggregateOrder);
    form->addRow(tr("Routes file"), m_routesFile);

    m_validation = new QLabel;
    m_validation->setObjectName(QStringLiteral("validationMessage"));
    m_validation->setWordWrap(true);
    m_validation->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(form);
    layout->addWidget(m_validation);

    const auto onEdit = [this] {
        validate();
        Q_EMIT edited();
    };
    connect(m_runnerUrl, &QLineEdit::textChanged, this, [this] { m_urlEdited = !m_loading; });
    for (QLineEdit *edit :
         {m_runnerUrl, m_secret, lease, poll, base, maxDelay, timeout, m_routesFile})
        connect(edit, &QLineEdit::textChanged, this, [this, onEdit] {
            if (!m_loading)
                onEdit();
        });
    connect(m_delivery, &QComboBox::currentIndexChanged, this, [this, onEdit] {
        enableBatchBounds();
        if (!m_loading)
            onEdit();
    });
    connect(m_aggregateOrder, &QCheckBox::toggled, this, [this, onEdit] {
        if (!m_loading)
            onEdit();
    });
    for (QSpinBox *spin :
         {m_concurrency, m_batchSize, m_maxAttempts, m_batchMaxEvents, m_batchMaxBytes})
        connect(spin, &QSpinBox::valueChanged, this, [this, onEdit] {
            if (!m_loading)
                onEdit();
        });

    // Defaults without a runner URL: a dispatcher must never start against
    // something the user did not name.
    m_loading = true; // the defaults must not overwrite saved settings
    setConfig(core::DispatcherConfig{}, true);
    load();
    m_loading = false;
    validate();
}

DispatcherSettingsForm::~DispatcherSettingsForm() = default;

void DispatcherSettingsForm::enableBatchBounds() {
    const bool batch = m_delivery->currentData() == core::deliveryName(core::Delivery::Batch);
    m_batchMaxEvents->setEnabled(batch);
    m_batchMaxBytes->setEnabled(batch);
}

QLineEdit *DispatcherSettingsForm::durationField(Field field) const {
    return static_cast<QLineEdit *>(m_fields.value(field));
}

void DispatcherSettingsForm::setConfig(const core::DispatcherConfig &config, bool persist) {
    if (!persist)
        m_persist = false;
    const bool wasLoading = std::exchange(m_loading, true);
    m_hidden = config;
    m_runnerUrl->setText(config.runnerUrl.toString());
    m_secret->setText(config.secrets.join(QLatin1Char(' ')));
    m_concurrency->setValue(config.concurrency);
    m_batchSize->setValue(config.batchSize);
    m_maxAttempts->setValue(config.maxAttempts);
    m_delivery->setCurrentIndex(m_delivery->findData(core::deliveryName(config.delivery)));
    m_batchMaxEvents->setValue(config.batchMaxEvents);
    m_batchMaxBytes->setValue(int(std::min<qint64>(config.batchMaxBytes, 1 << 30)));
    enableBatchBounds();
    durationField(Field::Lease)->setText(core::formatDuration(config.lease));
    durationField(Field::PollInterval)->setText(core::formatDuration(config.pollInterval));
    durationField(Field::BaseDelay)->setText(core::formatDuration(config.baseDelay));
    durationField(Field::MaxDelay)->setText(core::formatDuration(config.maxDelay));
    durationField(Field::RequestTimeout)->setText(core::formatDuration(config.requestTimeout));
    m_aggregateOrder->setChecked(config.ordering == core::Ordering::Aggregate);
    m_routesFile->setText(config.routesFile);
    // Routes made in code (the demo's) are kept as they are, and shown by
    // their name; a file's are read again from it by config().
    const bool given = config.routes != nullptr;
    m_routesFile->setReadOnly(given);
    if (!given)
        m_hidden.routes.reset();
    m_loading = wasLoading;
    validate();
}

core::DispatcherConfig DispatcherSettingsForm::config() const {
    core::DispatcherConfig config = m_hidden;
    config.runnerUrl = QUrl(m_runnerUrl->text().trimmed());
    config.secrets = m_secret->text().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    config.concurrency = m_concurrency->value();
    config.batchSize = m_batchSize->value();
    config.maxAttempts = m_maxAttempts->value();
    config.delivery =
        core::deliveryNamed(m_delivery->currentData().toString()).value_or(config.delivery);
    config.batchMaxEvents = m_batchMaxEvents->value();
    config.batchMaxBytes = m_batchMaxBytes->value();
    const auto duration = [this](Field field, core::Millis fallback) {
        const auto parsed = core::parseDuration(durationField(field)->text().trimmed());
        return parsed ? parsed.value() : fallback;
    };
    config.lease = duration(Field::Lease, config.lease);
    config.pollInterval = duration(Field::PollInterval, config.pollInterval);
    config.baseDelay = duration(Field::BaseDelay, config.baseDelay);
    config.maxDelay = duration(Field::MaxDelay, config.maxDelay);
    config.requestTimeout = duration(Field::RequestTimeout, config.requestTimeout);
    config.ordering =
        m_aggregateOrder->isChecked() ? core::Ordering::Aggregate : core::Ordering::None;
    if (m_routesFile->isReadOnly() && config.routes)
        return config; // routes given in code, kept with their name
    config.routes.reset();
    config.routesFile.clear();
    if (const QString routes = m_routesFile->text().trimmed(); !routes.isEmpty()) {
        // A file that does not load leaves the routes out: validate() says why.
        if (auto loaded = core::Routes::load(routes))
            (void)core::applyRoutes(config, loaded.value(), routes);
    }
    return config;
}

QString DispatcherSettingsForm::routesError() const {
    const QString path = m_routesFile->text().trimmed();
    if (path.isEmpty() || (m_routesFile->isReadOnly() && m_hidden.routes))
        return {};
    auto loaded = core::Routes::load(path);
    if (!loaded)
        return loaded.errorMessage();
    core::DispatcherConfig config = m_hidden;
    const QList<core::RoutesError> errors = dispatch::checkDestinations(loaded.value(), config);
    if (!errors.isEmpty())
        return core::routesErrorText(path, errors);
    if (auto applied = core::applyRoutes(config, loaded.value(), path); !applied)
        return applied.errorMessage();
    return {};
}

QString DispatcherSettingsForm::validationError() const {
    return m_validation->text();
}

void DispatcherSettingsForm::validate() {
    for (QWidget *widget : std::as_const(m_fields))
        widget->setStyleSheet({});

    struct Name {
        Field field;
        const char *flag; // as core::DispatcherConfig::validate() names it
        QString label;    // as the form shows it
    };
    // Longest flags first, so replacing "--lease" cannot eat part of another.
    const QList<Name> names = {
        {Field::BatchMaxEvents, "--batch-max-events", tr("Batch max events")},
        {Field::BatchMaxBytes, "--batch-max-bytes", tr("Batch max bytes")},
        {Field::RequestTimeout, "--request-timeout", tr("Request timeout")},
        {Field::PollInterval, "--poll-interval", tr("Poll interval")},
        {Field::MaxAttempts, "--max-attempts", tr("Max attempts")},
        {Field::Concurrency, "--concurrency", tr("Concurrency")},
        {Field::RunnerUrl, "--runner-url", tr("Runner URL")},
        {Field::BatchSize, "--batch-size", tr("Batch size")},
        {Field::BaseDelay, "--base-delay", tr("Backoff base")},
        {Field::MaxDelay, "--max-delay", tr("Backoff max")},
        {Field::Lease, "--lease", tr("Lease")},
    };

    QString message;
    std::optional<Field> culprit;
    for (const Field field : {Field::Lease, Field::PollInterval, Field::BaseDelay, Field::MaxDelay,
                              Field::RequestTimeout}) {
        const auto parsed = core::parseDuration(durationField(field)->text().trimmed());
        if (!parsed) {
            const auto name = std::find_if(names.begin(), names.end(),
                                           [field](const Name &n) { return n.field == field; });
            message = name->label + QStringLiteral(": ") + parsed.errorMessage();
            culprit = field;
            break;
        }
    }
    if (message.isEmpty()) {
        if (const QString routes = routesError(); !routes.isEmpty()) {
            message = tr("Routes file: ") + routes;
            culprit = Field::RoutesFile;
        }
    }
    if (message.isEmpty()) {
        if (const auto checked = config().validate(); !checked) {
            message = checked.errorMessage();
            // validate() speaks in command-line flags; the form names its
            // fields, and marks the one the message is about (the first named).
            qsizetype first = message.size();
            for (const Name &name : names) {
                const qsizetype at = message.indexOf(QLatin1String(name.flag));
                if (at >= 0 && at < first) {
                    first = at;
                    culprit = name.field;
                }
            }
            for (const Name &name : names)
                message.replace(QLatin1String(name.flag),
                                QStringLiteral("“") + name.label + QStringLiteral("”"));
            if (!culprit) {
                // The only form field whose messages name no flag: the signer's.
                culprit = Field::Secret;
                message = tr("Secret: ") + message;
            }
        }
    }
    // A runner URL nobody has given yet is where every fresh form starts, not
    // a mistake: say what to fill in, without alarm, until the user edits it.
    const bool hint =
        culprit == Field::RunnerUrl && m_runnerUrl->text().trimmed().isEmpty() && !m_urlEdited;
    m_validation->setStyleSheet(hint ? QString() : QStringLiteral("color: #c01c28;"));
    m_validation->setText(message);
    m_validation->setVisible(!message.isEmpty());
    if (culprit && !hint)
        m_fields.value(*culprit)->setStyleSheet(QStringLiteral("border: 1px solid #c01c28;"));
    if (message.isEmpty())
        save();
}

void DispatcherSettingsForm::load() {
    if (!m_settings)
        return;
    core::DispatcherConfig config = m_hidden;
    m_settings->beginGroup(QStringLiteral("dispatcher"));
    config.runnerUrl = QUrl(m_settings->value(QStringLiteral("runnerUrl")).toString());
    const auto count = [this](const QString &key, int fallback) {
        bool ok = false;
        const int value = m_settings->value(key, fallback).toInt(&ok);
        return ok ? value : fallback;
    };
    const auto duration = [this](const QString &key, core::Millis fallback) {
        const auto parsed = core::parseDuration(m_settings->value(key).toString());
        return parsed ? parsed.value() : fallback;
    };
    config.concurrency = count(QStringLiteral("concurrency"), config.concurrency);
    config.batchSize = count(QStringLiteral("batchSize"), config.batchSize);
    config.maxAttempts = count(QStringLiteral("maxAttempts"), config.maxAttempts);
    config.lease = duration(QStringLiteral("lease"), config.lease);
    config.pollInterval = duration(QStringLiteral("pollInterval"), config.pollInterval);
    config.baseDelay = duration(QStringLiteral("baseDelay"), config.baseDelay);
    config.maxDelay = duration(QStringLiteral("maxDelay"), config.maxDelay);
    config.requestTimeout = duration(QStringLiteral("requestTimeout"), config.requestTimeout);
    config.delivery = core::deliveryNamed(m_settings->value(QStringLiteral("delivery")).toString())
                          .value_or(config.delivery);
    config.batchMaxEvents = count(QStringLiteral("batchMaxEvents"), config.batchMaxEvents);
    config.batchMaxBytes = count(QStringLiteral("batchMaxBytes"), int(config.batchMaxBytes));
    config.ordering = core::orderingNamed(m_settings->value(QStringLiteral("ordering")).toString())
                          .value_or(config.ordering);
    config.routesFile = m_settings->value(QStringLiteral("routesFile")).toString();
    m_settings->endGroup();
    setConfig(config, true);
}

void DispatcherSettingsForm::save() {
    if (!m_settings || !m_persist || m_loading)
        return;
    const core::DispatcherConfig c = config();
    m_settings->beginGroup(QStringLiteral("dispatcher"));
    // The secret is deliberately not here: it stays in memory only. So do
    // credentials in the runner URL (https://user:password@..., an API key
    // in the query): QSettings is a plain file, so only the URL without them
    // is saved.
    m_settings->setValue(QStringLiteral("runnerUrl"),
                         core::urlWithoutCredentials(c.runnerUrl).toString());
    m_settings->setValue(QStringLiteral("concurrency"), c.concurrency);
    m_settings->setValue(QStringLiteral("batchSize"), c.batchSize);
    m_settings->setValue(QStringLiteral("maxAttempts"), c.maxAttempts);
    m_settings->setValue(QStringLiteral("lease"), core::formatDuration(c.lease));
    m_settings->setValue(QStringLiteral("pollInterval"), core::formatDuration(c.pollInterval));
    m_settings->setValue(QStringLiteral("baseDelay"), core::formatDuration(c.baseDelay));
    m_settings->setValue(QStringLiteral("maxDelay"), core::formatDuration(c.maxDelay));
    m_settings->setValue(QStringLiteral("requestTimeout"), core::formatDuration(c.requestTimeout));
    m_settings->setValue(QStringLiteral("delivery"), core::deliveryName(c.delivery));
    m_settings->setValue(QStringLiteral("batchMaxEvents"), c.batchMaxEvents);
    m_settings->setValue(QStringLiteral("batchMaxBytes"), c.batchMaxBytes);
    m_settings->setValue(QStringLiteral("ordering"), core::orderingName(c.ordering));
    m_settings->setValue(QStringLiteral("routesFile"), m_routesFile->text().trimmed());
    m_settings->endGroup();
}

} // namespace outbox::console
