#include "console/widgets/bulkdialog.h"

#include "console/model/bulkjob.h"
#include "console/model/consoletypes.h"
#include "console/model/storeclient.h"
#include "core/uuidtext.h"
#include "ui_bulkdialog.h"

#include <QCheckBox>
#include <QPushButton>

#include <array>

namespace outbox::console {

namespace {

// How the dialog speaks of an action, in the order of store::Action.
struct ActionWords {
    const char *verb;   // "Requeue"
    const char *effect; // what happens to each event
};
constexpr std::array<ActionWords, 5> kWords{{
    {QT_TRANSLATE_NOOP("BulkDialog", "Retry now"),
     QT_TRANSLATE_NOOP("BulkDialog", "Pending events become due now: their backoff is skipped.")},
    {QT_TRANSLATE_NOOP("BulkDialog", "Requeue"),
     QT_TRANSLATE_NOOP("BulkDialog", "Dead events become pending again with attempts reset to 0, "
                                     "and are delivered again.")},
    {QT_TRANSLATE_NOOP("BulkDialog", "Cancel"),
     QT_TRANSLATE_NOOP("BulkDialog", "Pending and dead events become dead, marked as cancelled by "
                                     "you; they will not be delivered.")},
    {QT_TRANSLATE_NOOP("BulkDialog", "Purge"),
     QT_TRANSLATE_NOOP("BulkDialog", "Delivered and dead events are deleted with their failure "
                                     "history. This cannot be undone.")},
    {QT_TRANSLATE_NOOP("BulkDialog", "Replay"),
     QT_TRANSLATE_NOOP("BulkDialog", "Each delivered or dead event is copied to a new pending "
                                     "event, which is delivered again; the original stays as it "
                                     "is.")},
}};

const ActionWords &wordsFor(store::Action action) {
    return kWords.at(std::size_t(action));
}

} // namespace

BulkDialog::BulkDialog(StoreClient *client, store::Action action, store::EventFilter filter,
                       QWidget *parent)
    : QDialog(parent)
    , m_ui(std::make_unique<Ui::BulkDialog>())
    , m_client(client)
    , m_action(action)
    , m_filter(std::move(filter)) {
    m_ui->setupUi(this);
    setObjectName(QStringLiteral("bulkDialog"));
    // A fixed-size layout ignores the dialog's minimum width; a child's counts.
    m_ui->filterLabel->setMinimumWidth(540);
    // The dialog takes the size of the page shown (see setStage()).
    layout()->setSizeConstraint(QLayout::SetFixedSize);
    m_ui->checkingLayout->addStretch();
    m_ui->resultLayout->addStretch();
    setWindowTitle(tr("%1 events matching the filter").arg(verb(action)));
    QFont headline = m_ui->headlineLabel->font();
    headline.setPointSizeF(headline.pointSizeF() * 1.2);
    headline.setBold(true);
    m_ui->headlineLabel->setFont(headline);
    const QString described = m_filter.describe();
    m_ui->filterLabel->setText(
        tr("Filter: %1").arg(described.isEmpty() ? tr("(everything)") : described));
    const bool rate = hasRateLimit(action);
    m_ui->rateLabel->setVisible(rate);
    m_ui->rateSpin->setVisible(rate);
    m_ui->startButton->setDefault(false);
    m_ui->startButton->setAutoDefault(false);
    m_ui->cancelButton->setAutoDefault(false);
    if (action == store::Action::Replay) {
        m_again = new QCheckBox(this);
        m_again->setObjectName(QStringLiteral("replayAgain"));
        m_again->hide();
        m_ui->confirmLayout->addWidget(m_again);
    }
    m_ui->closeButton->setAutoDefault(false);

    connect(m_ui->startButton, &QPushButton::clicked, this, &BulkDialog::start);
    connect(m_ui->cancelButton, &QPushButton::clicked, this, &QDialog::reject);
    connect(m_ui->closeButton, &QPushButton::clicked, this, &QDialog::accept);
    m_countingTick.setInterval(1000);
    connect(&m_countingTick, &QTimer::timeout, this, [this] {
        m_ui->headlineLabel->setText(
            tr("Counting the events that match… %1 s so far; Cancel stops it, nothing has "
               "changed yet.")
                .arg(m_countingFor.elapsed() / 1000));
    });
    setStage(Stage::Checking);
}

BulkDialog::~BulkDialog() {
    if (m_job) {
        m_job->cancel();
    }
}

QString BulkDialog::verb(store::Action action) {
    return tr(wordsFor(action).verb);
}

QString BulkDialog::effect(store::Action action) {
    return tr(wordsFor(action).effect);
}

bool BulkDialog::hasRateLimit(store::Action action) {
    // The actions that send events to the runner again.
    return store::wakesDispatchers(action);
}

void BulkDialog::setRate(double eventsPerSecond) {
    m_ui->rateSpin->setValue(eventsPerSecond);
}

double BulkDialog::rate() const {
    return hasRateLimit(m_action) ? m_ui->rateSpin->value() : 0.0;
}

void BulkDialog::setBatchSize(int rows) {
    m_ui->batchSpin->setValue(rows);
}

void BulkDialog::setReason(const QString &reason) {
    m_ui->reasonEdit->setText(reason);
}

void BulkDialog::setSeal(const store::BulkSeal &seal) {
    m_previewSeal = seal;
}

void BulkDialog::setStage(Stage stage) {
    m_stage = stage;
    QWidget *page = m_ui->checkingPage;
    switch (stage) {
    case Stage::Checking:
        page = m_ui->checkingPage;
        break;
    case Stage::Confirm:
        page = m_ui->confirmPage;
        break;
    case Stage::Started:
    case Stage::Failed:
        page = m_ui->resultPage;
        break;
    }
    m_ui->pages->setCurrentWidget(page);
    // Size the dialog to the page shown, not to the largest page.
    for (int i = 0; i < m_ui->pages->count(); ++i) {
        QWidget *w = m_ui->pages->widget(i);
        w->setSizePolicy(w == page ? QSizePolicy::Preferred : QSizePolicy::Ignored,
                         w == page ? QSizePolicy::Preferred : QSizePolicy::Ignored);
    }
    const bool confirm = stage == Stage::Confirm && m_matched > 0;
    m_ui->startButton->setVisible(confirm);
    // Enter must never start a change: Cancel is the default while confirming.
    m_ui->startButton->setDefault(false);
    m_ui->cancelButton->setDefault(stage == Stage::Confirm || stage == Stage::Checking);
    m_ui->cancelButton->setVisible(stage == Stage::Checking || stage == Stage::Confirm);
    m_ui->closeButton->setVisible(stage == Stage::Started || stage == Stage::Failed ||
                                  (stage == Stage::Confirm && m_matched == 0));
    layout()->invalidate();
    if (stage == Stage::Checking) {
        m_ui->headlineLabel->setText(tr("Counting the events that match…"));
        m_countingFor.start();
        m_countingTick.start();
    } else {
        m_countingTick.stop();
    }
    Q_EMIT stageChanged(stage);
}

void BulkDialog::begin() {
    if (!m_client) {
        onFailed(tr("Not connected to a database."));
        return;
    }
    store::BulkOptions options;
    options.dryRun = true;
    options.sampleSize = 20;
    options.seal = m_previewSeal;
    BulkJob *job = m_client->startBulk(m_action, m_filter, options);
    job->setParent(this);
    m_job = job;
    connect(job, &BulkJob::finished, this, &BulkDialog::onDryRun);
    connect(job, &BulkJob::failed, this,
            [this](const core::Error &error) { onFailed(error.message); });
}

void BulkDialog::onDryRun(const store::BulkResult &result) {
    m_job = nullptr;
    m_seal = result.seal;
    m_matched = result.seal.count;
    m_ui->sampleList->clear();
    for (const QUuid &id : result.sample) {
        m_ui->sampleList->addItem(core::uuidText(id));
    }
    m_ui->sampleList->scrollToTop();
    if (result.matched > result.sample.size()) {
        m_ui->sampleLabel->setText(tr("The first %1 of the %2 events that match:")
                                       .arg(result.sample.size())
                                       .arg(formatCount(result.matched)));
    } else {
        m_ui->sampleLabel->setText(tr("The events that match:"));
    }
    if (m_matched == 0) {
        m_ui->headlineLabel->setText(
            tr("No events match: nothing to %1.").arg(verb(m_action).toLower()));
        m_ui->sampleList->hide();
        m_ui->sampleLabel->setText(
            tr("Only events in a state this action applies to are counted. %1")
                .arg(effect(m_action)));
    } else {
        m_ui->headlineLabel->setText(tr("%1 %2 %3?")
                                         .arg(verb(m_action), formatCount(m_matched),
                                              m_matched == 1 ? tr("event") : tr("events")));
        m_ui->filterLabel->setText(m_ui->filterLabel->text() + QLatin1String("\n\n") +
                                   effect(m_action));
        m_ui->startButton->setText(tr("%1 %2 %3")
                                       .arg(verb(m_action), formatCount(m_matched),
                                            m_matched == 1 ? tr("event") : tr("events")));
        if (m_again && result.alreadyReplayed > 0) {
            m_again->setText(
                tr("Also replay the %1 that were replayed before (each gets "
                   "another copy)")
                    .arg(result.alreadyReplayed == 1
                             ? tr("1 event")
                             : tr("%1 events").arg(formatCount(result.alreadyReplayed))));
            m_again->setChecked(false);
            m_again->show();
        }
    }
    setStage(Stage::Confirm);
}

void BulkDialog::start() {
    if (m_stage != Stage::Confirm || m_matched == 0 || !m_client) {
        return;
    }
    store::BulkOptions options;
    options.batchSize = m_ui->batchSpin->value();
    options.ratePerSecond = rate();
    options.reason = m_ui->reasonEdit->text().trimmed();
    options.sampleSize = 10;
    options.seal = m_seal;
    options.again = m_again && m_again->isChecked();
    BulkJob *job = m_client->startBulk(m_action, m_filter, options);
    const QString described = m_filter.describe();
    QString title = tr("%1 %2 %3")
                        .arg(verb(m_action), formatCount(m_matched),
                             m_matched == 1 ? tr("event") : tr("events"));
    if (!described.isEmpty()) {
        title += QStringLiteral(" · ") + described;
    }
    setStage(Stage::Started);
    Q_EMIT jobStarted(job, title);
    accept();
}

void BulkDialog::onFailed(const QString &message) {
    m_job = nullptr;
    m_ui->headlineLabel->setText(tr("%1 failed").arg(verb(m_action)));
    m_ui->resultLabel->setText(message);
    setStage(Stage::Failed);
}

} // namespace outbox::console
