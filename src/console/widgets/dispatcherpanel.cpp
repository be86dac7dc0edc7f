#include "console/widgets/dispatcherpanel.h"

#include "console/model/consoletypes.h"
#include "console/widgets/dispatchersettingsform.h"
#include "console/widgets/logview.h"
#include "console/widgets/throughputchart.h"
#include "console/widgets/windowlayout.h"
#include "core/uuidtext.h"
#include "dispatch/dispatcherhost.h"
#include "store/queries.h"

#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace outbox::console {

namespace {

constexpr int RecentHistogramCount = 10; // ~5 s of 500 ms snapshots
constexpr qint64 RateWindowMs = 3000;
constexpr int FigureColumns = 3; // label/value pairs per row
constexpr qint64 FailureSummaryMs = 10'000;

QString formatRate(double perSecond) {
    return perSecond >= 100.0 ? QString::number(perSecond, 'f', 0)
                              : QString::number(perSecond, 'f', 1);
}

QString formatMicros(qint64 micros) {
    if (micros < 1000)
        return QString::number(micros) + QStringLiteral(" µs");
    if (micros < 10'000'000)
        return QString::number(double(micros) / 1000.0, 'f', micros < 100'000 ? 1 : 0) +
               QStringLiteral(" ms");
    return QString::number(double(micros) / 1e6, 'f', 1) + QStringLiteral(" s");
}

} // namespace

DispatcherPanel::DispatcherPanel(QSettings *settings, QWidget *parent)
    : QWidget(parent)
    , m_form(new DispatcherSettingsForm(settings)) {
    qRegisterMetaType<dispatch::DispatcherState>();
    qRegisterMetaType<dispatch::DispatcherStats>();
    // Embedded in the GUI process: when the machine is busy, the window's
    // thread should win the CPU over the dispatcher's.
    m_options.applicationName = QStringLiteral("outbox-console-dispatch");
    m_options.threadNiceIncrement = 5;
    connect(m_form, &DispatcherSettingsForm::edited, this, [this] {
        m_formDirty = true;
        updateButtons();
    });
    buildUi();
    updateButtons();
    resetFigures();
}

DispatcherPanel::~DispatcherPanel() {
    if (m_host)
        m_retiring.append(std::exchange(m_host, nullptr));
    for (dispatch::DispatcherHost *host : std::as_const(m_retiring)) {
        // Signals from the host's abort must not reach a half-destroyed panel.
        disconnect(host, nullptr, this, nullptr);
        delete host;
    }
}

void DispatcherPanel::buildUi() {
    setObjectName(QStringLiteral("dispatcherPanel"));

    // --- controls and settings -------------------------------------------
    m_startButton = new QPushButton(tr("Start"));
    m_startButton->setObjectName(QStringLiteral("dispatcherStart"));
    m_stopButton = new QPushButton(tr("Stop"));
    m_stopButton->setObjectName(QStringLiteral("dispatcherStop"));
    m_applyButton = new QPushButton(tr("Apply"));
    m_applyButton->setObjectName(QStringLiteral("dispatcherApply"));
    m_applyButton->setToolTip(tr("Send the edited settings to the running dispatcher."));
    connect(m_startButton, &QPushButton::clicked, this, &DispatcherPanel::start);
    connect(m_stopButton, &QPushButton::clicked, this, &DispatcherPanel::stop);
    connect(m_applyButton, &QPushButton::clicked, this, &DispatcherPanel::applyLive);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_startButton);
    buttons->addWidget(m_stopButton);
    buttons->addWidget(m_applyButton);
    buttons->addStretch();

    auto *settingsBox = new QGroupBox(tr("Settings"));
    auto *settingsLayout = new QVBoxLayout(settingsBox);
    settingsLayout->addLayout(buttons);
    settingsLayout->addWidget(m_form);
    settingsLayout->addStretch();

    // --- live figures ------------------------------------------------------
    auto *figuresBox = new QGroupBox(tr("Live"));
    auto *grid = new QGridLayout(figuresBox);
    const QList<QPair<QString, QString>> figures = {
        {QStringLiteral("state"), tr("State")},
        {QStringLiteral("delivered/s"), tr("Delivered/s")},
        {QStringLiteral("failures/s"), tr("Failures/s")},
        {QStringLiteral("in flight"), tr("In flight")},
        {QStringLiteral("delivered"), tr("Delivered")},
        {QStringLiteral("retried"), tr("Retried")},
        {QStringLiteral("dead"), tr("Dead")},
        {QStringLiteral("fenced-out"), tr("Fenced-out")},
        {QStringLiteral("reconnects"), tr("Reconnects")},
        {QStringLiteral("latency"), tr("HTTP p50 / p99")},
        {QStringLiteral("lag"), tr("Commit→delivered p99")},
        {QStringLiteral("listening"), tr("LISTEN")},
    };
    int row = 0;
    for (const auto &[key, label] : figures) {
        auto *name = new QLabel(label + QLatin1Char(':'));
        auto *value = new QLabel;
        value->setObjectName(QStringLiteral("figure:") + key);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        QFont bold = value->font();
        bold.setBold(true);
        value->setFont(bold);
        const int column = (row % FigureColumns) * 2;
        grid->addWidget(name, row / FigureColumns, column);
        grid->addWidget(value, row / FigureColumns, column + 1);
        m_figures.insert(key, value);
        ++row;
    }
    for (int column = 0; column < FigureColumns; ++column) {
        grid->setColumnMinimumWidth(column * 2 + 1, 130); // values change width while running
        grid->setColumnStretch(column * 2 + 1, 1);
    }

    m_log = new LogView;
    m_log->setObjectName(QStringLiteral("dispatcherLog"));
    auto *logBox = new QGroupBox(tr("Log"));
    auto *logLayout = new QVBoxLayout(logBox);
    logLayout->setContentsMargins(4, 4, 4, 4);
    logLayout->addWidget(m_log);

    m_chart = new ThroughputChart;
    m_chart->setObjectName(QStringLiteral("dispatcherCharts"));

    auto *settingsScroll = new QScrollArea;
    settingsScroll->setWidget(settingsBox);
    settingsScroll->setWidgetResizable(true);
    settingsScroll->setFrameShape(QFrame::NoFrame);
    settingsScroll->setMinimumWidth(settingsBox->sizeHint().width() + 40);

    // The charts get the room; the log can be dragged larger when reading it.
    auto *right = new QSplitter(Qt::Vertical);
    right->setChildrenCollapsible(false);
    right->addWidget(figuresBox);
    right->addWidget(m_chart);
    right->addWidget(logBox);
    right->setStretchFactor(0, 0);
    right->setStretchFactor(1, 3);
    right->setStretchFactor(2, 1);

    // The live side scrolls too in a low pane (a laptop's screen): what it
    // needs never makes the window taller than the screen.
    auto *rightScroll = new QScrollArea;
    rightScroll->setObjectName(QStringLiteral("dispatcherLiveScroll"));
    rightScroll->setWidget(right);
    rightScroll->setWidgetResizable(true);
    rightScroll->setFrameShape(QFrame::NoFrame);
    rightScroll->setMinimumHeight(WindowLayout::kMinimumBottomHeight);
    // Across, the figures and both charts keep their width (tabbed with a
    // neighbour instead, see WindowLayout).
    rightScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    rightScroll->setMinimumWidth(right->minimumSizeHint().width() +
                                 rightScroll->verticalScrollBar()->sizeHint().width());

    auto *splitter = new QSplitter(Qt::Horizontal);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(settingsScroll);
    splitter->addWidget(rightScroll);
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(splitter);
}

void DispatcherPanel::setConnInfo(const core::ConnInfo &info) {
    m_connInfo = info;
    m_hasConnInfo = true;
    updateButtons();
}

void DispatcherPanel::setConfig(const core::DispatcherConfig &config, bool persist) {
    m_form->setConfig(config, persist);
    m_formDirty = isRunning();
    updateButtons();
}

core::DispatcherConfig DispatcherPanel::config() const {
    return m_form->config();
}

QString DispatcherPanel::validationError() const {
    return m_form->validationError();
}

void DispatcherPanel::setPublisherFactory(dispatch::PublisherFactory factory) {
    m_publisherFactory = std::move(factory);
}

void DispatcherPanel::setReadOnly(bool readOnly, const QString &reason) {
    m_readOnly = readOnly;
    m_readOnlyReason = reason;
    updateButtons();
}

bool DispatcherPanel::isRunning() const {
    return m_host != nullptr;
}

void DispatcherPanel::updateButtons() {
    const bool valid = m_form->isValid();
    const bool running = isRunning();
    QString why;
    if (running)
        why = tr("The dispatcher is running.");
    else if (m_readOnly)
        why = m_readOnlyReason.isEmpty() ? tr("Read-only mode: the dispatcher changes rows.")
                                         : m_readOnlyReason;
    else if (!m_hasConnInfo)
        why = tr("Connect to a database first.");
    else if (!valid)
        why = tr("Fix the settings first: ") + m_form->validationError();
    m_startButton->setEnabled(why.isEmpty());
    m_startButton->setToolTip(
        why.isEmpty() ? tr("Start the embedded dispatcher on %1").arg(m_connInfo.redacted()) : why);
    const bool stopping = m_state == dispatch::DispatcherState::Stopping;
    m_stopButton->setEnabled(running && !stopping);
    m_applyButton->setEnabled(running && !stopping && valid && m_formDirty);
}

void DispatcherPanel::start() {
    if (isRunning()) {
        m_log->info(tr("The dispatcher is already running."));
        return;
    }
    if (m_readOnly) {
        m_log->warning(
            tr("Not started: %1")
                .arg(m_readOnlyReason.isEmpty() ? tr("read-only mode") : m_readOnlyReason));
        return;
    }
    if (!m_hasConnInfo) {
        m_log->warning(tr("Not started: no database connection is set."));
        return;
    }
    if (!m_form->isValid()) {
        m_log->warning(tr("Not started: %1").arg(m_form->validationError()));
        return;
    }
    const core::DispatcherConfig cfg = config();
    m_host = new dispatch::DispatcherHost(m_connInfo, cfg, m_publisherFactory, m_options);
    m_host->setParent(this);
    connect(m_host, &dispatch::DispatcherHost::stateChanged, this,
            &DispatcherPanel::onStateChanged);
    connect(m_host, &dispatch::DispatcherHost::statsSnapshot, this, &DispatcherPanel::onStats);
    connect(m_host, &dispatch::DispatcherHost::started, this, [this](const QUuid &workerId) {
        m_log->info(tr("Started as worker %1.").arg(core::uuidText(workerId)));
    });
    connect(m_host, &dispatch::DispatcherHost::failed, this,
            [this](const QString &message) { m_log->error(tr("Failed: %1").arg(message)); });
    connect(m_host, &dispatch::DispatcherHost::configApplied, this,
            [this](const QString &description) {
                m_log->info(tr("Settings applied: %1").arg(description));
            });
    connect(m_host, &dispatch::DispatcherHost::configRejected, this,
            [this](const QString &message) {
                m_formDirty = true;
                m_log->error(tr("Settings rejected: %1").arg(message));
                updateButtons();
            });
    connect(m_host, &dispatch::DispatcherHost::stopped, this, &DispatcherPanel::onStopped);

    m_rateSamples.clear();
    m_runWorker = {};
    m_runStartedAt = {};
    m_recentHttp.clear();
    m_recentLag.clear();
    m_deliveredRate = m_failureRate = 0.0;
    m_formDirty = false;
    m_log->info(tr("Starting on %1 with %2").arg(m_connInfo.redacted(), cfg.describe()));
    m_host->start();
    updateButtons();
    Q_EMIT runningChanged(true);
}

void DispatcherPanel::stop() {
    if (!isRunning())
        return;
    if (m_state != dispatch::DispatcherState::Stopping)
        m_log->info(tr("Stopping: finishing requests in flight, releasing leases."));
    m_host->shutDown();
}

void DispatcherPanel::stopForClose() {
    m_closeRequested = true;
    if (!isRunning()) {
        // Queued, so a closeEvent that calls this can return first.
        QTimer::singleShot(0, this, &DispatcherPanel::emitReadyToCloseWhenDone);
        return;
    }
    stop();
}

void DispatcherPanel::emitReadyToCloseWhenDone() {
    if (m_closeRequested && !isRunning() && m_retiring.isEmpty())
        Q_EMIT readyToClose();
}

void DispatcherPanel::onHostFinished(dispatch::DispatcherHost *host) {
    m_retiring.removeOne(host);
    host->deleteLater(); // not inside its own signal
    emitReadyToCloseWhenDone();
}

void DispatcherPanel::applyLive() {
    if (!isRunning() || !m_form->isValid())
        return;
    m_formDirty = false;
    m_host->setConfig(config());
    updateButtons();
}

void DispatcherPanel::onStateChanged(dispatch::DispatcherState state) {
    if (state == m_state)
        return;
    m_state = state;
    const QString name = dispatch::stateName(state);
    if (state == dispatch::DispatcherState::Reconnecting)
        m_log->warning(tr("State: %1 (database connection lost)").arg(name));
    else if (state == dispatch::DispatcherState::Failed)
        m_log->error(tr("State: %1").arg(name));
    else
        m_log->info(tr("State: %1").arg(name));
    setFigure(QStringLiteral("state"), name);
    updateButtons();
    Q_EMIT stateChanged(state);
}

void DispatcherPanel::onStats(const dispatch::DispatcherStats &stats) {
    if (stats.workerId != m_runWorker || stats.startedAt != m_runStartedAt) {
        // A new run: counters started from zero at startedAt.
        m_runWorker = stats.workerId;
        m_runStartedAt = stats.startedAt;
        m_rateSamples.clear();
        if (stats.startedAt.isValid())
            m_rateSamples.append({stats.startedAt, 0, 0});
        m_summaryAt = stats.at;
        m_summaryRetried = m_summaryDead = 0;
    }
    const qint64 failed = stats.retried + stats.dead;
    if (!m_rateSamples.isEmpty() && stats.at > m_rateSamples.constLast().at) {
        // Oldest sample kept: the newest one at least RateWindowMs old.
        while (m_rateSamples.size() > 1 && m_rateSamples.at(1).at.msecsTo(stats.at) >= RateWindowMs)
            m_rateSamples.removeFirst();
        const RateSample &oldest = m_rateSamples.constFirst();
        const double seconds = double(oldest.at.msecsTo(stats.at)) / 1000.0;
        m_deliveredRate = double(stats.delivered - oldest.delivered) / seconds;
        m_failureRate = double(failed - oldest.failed) / seconds;
        m_chart->addThroughputSample(stats.at, m_deliveredRate, m_failureRate);
    }
    if (m_rateSamples.isEmpty() || stats.at > m_rateSamples.constLast().at)
        m_rateSamples.append({stats.at, stats.delivered, failed});

    if (m_summaryAt.isValid() && m_summaryAt.msecsTo(stats.at) >= FailureSummaryMs) {
        const qint64 retried = stats.retried - m_summaryRetried;
        const qint64 dead = (stats.dead + stats.swept) - m_summaryDead;
        if (retried > 0 || dead > 0)
            m_log->warning(tr("Last %1 s: %2 attempt(s) failed and will be retried, %3 event(s) "
                              "dead-lettered.")
                               .arg(qRound(double(m_summaryAt.msecsTo(stats.at)) / 1000.0))
                               .arg(retried)
                               .arg(dead));
        m_summaryAt = stats.at;
        m_summaryRetried = stats.retried;
        m_summaryDead = stats.dead + stats.swept;
    }

    if (stats.lastError != m_lastStats.lastError && !stats.lastError.isEmpty())
        m_log->warning(stats.lastError);
    m_lastStats = stats;

    m_recentHttp.append(stats.recentHttpDuration);
    m_recentLag.append(stats.recentCommitToDelivered);
    while (m_recentHttp.size() > RecentHistogramCount)
        m_recentHttp.removeFirst();
    while (m_recentLag.size() > RecentHistogramCount)
        m_recentLag.removeFirst();
    dispatch::Histogram http;
    dispatch::Histogram lag;
    for (const auto &h : std::as_const(m_recentHttp))
        http.merge(h);
    for (const auto &h : std::as_const(m_recentLag))
        lag.merge(h);

    setFigure(QStringLiteral("state"), dispatch::stateName(stats.state));
    setFigure(QStringLiteral("delivered/s"), formatRate(m_deliveredRate));
    setFigure(QStringLiteral("failures/s"), formatRate(m_failureRate));
    setFigure(QStringLiteral("in flight"),
              QStringLiteral("%1 / %2").arg(stats.inFlight).arg(stats.concurrency));
    setFigure(QStringLiteral("delivered"), QString::number(stats.delivered));
    setFigure(QStringLiteral("retried"), QString::number(stats.retried));
    setFigure(QStringLiteral("dead"), QString::number(stats.dead + stats.swept));
    setFigure(QStringLiteral("fenced-out"), QString::number(stats.fencedOut));
    setFigure(QStringLiteral("reconnects"), QString::number(stats.reconnects));
    setFigure(QStringLiteral("latency"),
              http.count()
                  ? formatMicros(http.p50()) + QStringLiteral(" / ") + formatMicros(http.p99())
                  : QStringLiteral("–"));
    setFigure(QStringLiteral("lag"), lag.count() ? formatMicros(lag.p99()) : QStringLiteral("–"));
    setFigure(QStringLiteral("listening"), stats.listening ? tr("yes") : tr("no (polling)"));
    Q_EMIT statsUpdated(stats);
}

void DispatcherPanel::onStopped() {
    if (m_host) {
        dispatch::DispatcherHost *host = std::exchange(m_host, nullptr);
        disconnect(host, nullptr, this, nullptr);
        // Its threads end in the background (the registry row is deleted
        // first); deleting it before that would wait for them.
        m_retiring.append(host);
        connect(host, &dispatch::DispatcherHost::finished, this,
                [this, host] { onHostFinished(host); });
        host->shutDown(); // after a stop() or a failure alike
    }
    m_deliveredRate = m_failureRate = 0.0;
    if (m_state != dispatch::DispatcherState::Failed)
        m_state = dispatch::DispatcherState::Stopped;
    setFigure(QStringLiteral("state"), dispatch::stateName(m_state));
    setFigure(QStringLiteral("delivered/s"), formatRate(0.0));
    setFigure(QStringLiteral("failures/s"), formatRate(0.0));
    setFigure(QStringLiteral("in flight"), QStringLiteral("0 / %1").arg(m_lastStats.concurrency));
    m_log->info(tr("Stopped. Delivered %1, retried %2, dead %3, leases released %4.")
                    .arg(m_lastStats.delivered)
                    .arg(m_lastStats.retried)
                    .arg(m_lastStats.dead + m_lastStats.swept)
                    .arg(m_lastStats.released));
    updateButtons();
    Q_EMIT runningChanged(false);
}

void DispatcherPanel::setFigure(const QString &key, const QString &value) {
    if (QLabel *label = m_figures.value(key))
        label->setText(value);
}

void DispatcherPanel::resetFigures() {
    for (auto it = m_figures.cbegin(); it != m_figures.cend(); ++it)
        it.value()->setText(QStringLiteral("–"));
    setFigure(QStringLiteral("state"), dispatch::stateName(m_state));
}

void DispatcherPanel::addBacklogSample(const store::StatusCounts &counts) {
    m_chart->addBacklogSample(counts);
}

} // namespace outbox::console
