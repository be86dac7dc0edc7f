#include "console/widgets/purgedialog.h"

#include "console/model/bulkjob.h"
#include "console/model/consoletypes.h"
#include "console/model/storeclient.h"
#include "core/duration.h"
#include "ui_purgedialog.h"

#include <QPushButton>

namespace outbox::console {

PurgeDialog::PurgeDialog(StoreClient *client, QWidget *parent)
    : QDialog(parent)
    , m_ui(std::make_unique<Ui::PurgeDialog>())
    , m_client(client) {
    m_ui->setupUi(this);
    setObjectName(QStringLiteral("purgeDialog"));
    // The item data is the status to narrow to; none for both (purge itself
    // only ever touches delivered and dead events).
    m_ui->statusCombo->addItem(tr("Delivered"), QVariant::fromValue(core::Status::Delivered));
    m_ui->statusCombo->addItem(tr("Dead"), QVariant::fromValue(core::Status::Dead));
    m_ui->statusCombo->addItem(tr("Delivered and dead"));
    m_purge = m_ui->buttons->addButton(tr("Purge…"), QDialogButtonBox::AcceptRole);
    m_purge->setObjectName(QStringLiteral("purgeButton"));
    m_purge->setEnabled(false);
    m_purge->setAutoDefault(false);
    if (QPushButton *cancel = m_ui->buttons->button(QDialogButtonBox::Cancel)) {
        cancel->setDefault(true);
    }
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(400);
    connect(&m_debounce, &QTimer::timeout, this, &PurgeDialog::runPreview);
    connect(m_ui->buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_ui->buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_ui->statusCombo, &QComboBox::currentIndexChanged, this,
            &PurgeDialog::schedulePreview);
    connect(m_ui->ageEdit, &QLineEdit::textChanged, this, &PurgeDialog::schedulePreview);
    connect(m_ui->namespaceEdit, &QLineEdit::textChanged, this, &PurgeDialog::schedulePreview);
    schedulePreview();
}

PurgeDialog::~PurgeDialog() {
    if (m_job) {
        m_job->cancel();
    }
}

store::EventFilter PurgeDialog::filter() const {
    store::EventFilter f;
    const QVariant status = m_ui->statusCombo->currentData();
    if (status.isValid()) {
        f.status = status.value<core::Status>();
    }
    f.nameSpace = m_ui->namespaceEdit->text().trimmed();
    const auto age = core::parseDuration(m_ui->ageEdit->text().trimmed());
    if (age) {
        f.olderThan = age.value();
    }
    return f;
}

void PurgeDialog::schedulePreview() {
    m_purge->setEnabled(false);
    m_seal = {};
    const auto age = core::parseDuration(m_ui->ageEdit->text().trimmed());
    if (!age) {
        m_ui->previewLabel->setText(tr("Age: %1").arg(age.errorMessage()));
        m_ui->ageEdit->setStyleSheet(QStringLiteral("QLineEdit { background: #ffd7d7; }"));
        m_debounce.stop();
        return;
    }
    m_ui->ageEdit->setStyleSheet({});
    m_ui->previewLabel->setText(tr("Counting…"));
    m_debounce.start();
}

void PurgeDialog::runPreview() {
    if (!m_client) {
        m_ui->previewLabel->setText(tr("Not connected to a database."));
        return;
    }
    if (m_job) {
        m_job->cancel();
        m_job->deleteLater();
    }
    store::BulkOptions options;
    options.dryRun = true;
    options.sampleSize = 0;
    BulkJob *job = m_client->startBulk(store::Action::Purge, filter(), options);
    job->setParent(this);
    m_job = job;
    connect(job, &BulkJob::finished, this, [this, job](const store::BulkResult &result) {
        if (job != m_job) {
            return;
        }
        m_job = nullptr;
        job->deleteLater();
        m_seal = result.seal;
        m_ui->previewLabel->setText(
            result.matched == 0
                ? tr("No events match.")
                : tr("%1 events would be deleted.").arg(formatCount(result.matched)));
        m_purge->setEnabled(result.matched > 0);
        m_purge->setText(result.matched > 0
                             ? tr("Purge %1 events…").arg(formatCount(result.matched))
                             : tr("Purge…"));
    });
    connect(job, &BulkJob::failed, this, [this, job](const core::Error &error) {
        if (job != m_job) {
            return;
        }
        m_job = nullptr;
        job->deleteLater();
        m_ui->previewLabel->setText(tr("Could not count: %1").arg(error.message));
    });
}

} // namespace outbox::console
