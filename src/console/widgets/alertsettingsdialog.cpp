#include "console/widgets/alertsettingsdialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace outbox::console {

namespace {

constexpr int kMaxSeconds = 7 * 24 * 3600;

QSpinBox *secondsBox(const QString &name, std::chrono::seconds value) {
    auto *box = new QSpinBox;
    box->setObjectName(name);
    box->setRange(0, kMaxSeconds);
    box->setSuffix(AlertSettingsDialog::tr(" s"));
    box->setSpecialValueText(AlertSettingsDialog::tr("Off"));
    box->setAccelerated(true);
    box->setValue(int(std::min<qint64>(value.count(), kMaxSeconds)));
    return box;
}

} // namespace

AlertSettingsDialog::AlertSettingsDialog(const AlertThresholds &thresholds, const QString &target,
                                         const QString &channel, bool canNotify, QWidget *parent)
    : QDialog(parent)
    , m_initial(thresholds)
    , m_dueAge(secondsBox(QStringLiteral("oldestDueAgeEdit"), thresholds.oldestDueAge))
    , m_dueFor(secondsBox(QStringLiteral("oldestDueForEdit"), thresholds.oldestDueFor))
    , m_deaths(new QDoubleSpinBox)
    , m_unclaimed(secondsBox(QStringLiteral("unclaimedForEdit"), thresholds.unclaimedFor))
    , m_connectionLost(new QCheckBox(tr("Alert when the &connection is lost")))
    , m_notify(new QCheckBox(tr("Show desktop &notifications"))) {
    setObjectName(QStringLiteral("alertSettingsDialog"));
    setWindowTitle(tr("Alert thresholds for %1").arg(target));
    // "For at least" 0 means "at once", not off.
    m_dueFor->setSpecialValueText({});
    m_deaths->setObjectName(QStringLiteral("deathsPerMinuteEdit"));
    m_deaths->setRange(0, 1000000);
    m_deaths->setDecimals(1);
    m_deaths->setSpecialValueText(tr("Off"));
    m_deaths->setSuffix(tr(" a minute"));
    m_deaths->setValue(thresholds.deathsPerMinute);
    m_connectionLost->setObjectName(QStringLiteral("connectionLostCheck"));
    m_connectionLost->setChecked(thresholds.connectionLost);
    m_notify->setObjectName(QStringLiteral("notifyCheck"));
    m_notify->setChecked(thresholds.notify);
    m_notify->setToolTip(tr("Alerts show in the window either way"));
    m_notify->setEnabled(canNotify);

    auto *intro = new QLabel(tr("The console alerts when one of these holds on this database. "
                                "Zero turns an alert off. Kept for this database only."));
    intro->setWordWrap(true);
    auto *form = new QFormLayout;
    const auto addRow = [form](const QString &label, QWidget *field, const QString &tip) {
        auto *text = new QLabel(label);
        text->setBuddy(field);
        field->setToolTip(tip);
        form->addRow(text, field);
    };
    addRow(tr("Oldest &due event waited:"), m_dueAge,
           tr("A pending event that is due (not waiting for a retry, not paused) has waited "
              "this long since it became due"));
    addRow(tr("... for at &least:"), m_dueFor,
           tr("The oldest due event stayed over the threshold this long (requeued old events "
              "that are delivered at once raise nothing)"));
    addRow(tr("D&ead per minute above:"), m_deaths,
           tr("More events than this died per minute over the last minute"));
    addRow(tr("&Unclaimed for:"), m_unclaimed,
           tr("Due events wait and nothing was claimed, delivered or failed for this long"));
    form->addRow(m_connectionLost);
    form->addRow(m_notify);
    auto *where = new QLabel(channel);
    where->setObjectName(QStringLiteral("notifyChannelLabel"));
    where->setWordWrap(true);
    form->addRow(where);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    // An access key as every field here has (Alt+O); Escape cancels.
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&OK"));
    buttons->setObjectName(QStringLiteral("alertSettingsButtons"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(buttons);
    m_dueAge->setFocus(Qt::OtherFocusReason);
}

AlertThresholds AlertSettingsDialog::thresholds() const {
    AlertThresholds t = m_initial;
    t.oldestDueAge = std::chrono::seconds(m_dueAge->value());
    t.oldestDueFor = std::chrono::seconds(m_dueFor->value());
    t.deathsPerMinute = m_deaths->value();
    t.unclaimedFor = std::chrono::seconds(m_unclaimed->value());
    t.connectionLost = m_connectionLost->isChecked();
    t.notify = m_notify->isChecked();
    return t;
}

} // namespace outbox::console
