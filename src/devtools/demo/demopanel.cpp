#include "devtools/demo/demopanel.h"

#include "console/widgets/fleetwindow.h"
#include "devtools/demo/demoenvironment.h"
#include "devtools/demo/demofleet.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrentRun>

#include <cmath>

namespace outbox::console {

DemoPanel::DemoPanel(DemoEnvironment *demo, QWidget *parent)
    : QWidget(parent)
    , m_demo(demo) {
    setObjectName(QStringLiteral("demoPanel"));
    m_failRate = new QSpinBox;
    m_failRate->setObjectName(QStringLiteral("demoFailRate"));
    m_failRate->setRange(0, 100);
    m_failRate->setSuffix(QStringLiteral(" %"));
    m_failRate->setToolTip(tr("Share of requests the development runner answers with 503 "
                              "(the dispatcher retries them with backoff)."));
    m_latency = new QSpinBox;
    m_latency->setObjectName(QStringLiteral("demoLatency"));
    m_latency->setRange(0, 60'000);
    m_latency->setSingleStep(10);
    m_latency->setSuffix(QStringLiteral(" ms"));
    m_latency->setAccelerated(true);
    m_latency->setToolTip(tr("How long the runner waits before answering each request."));
    m_rate = new QDoubleSpinBox;
    m_rate->setObjectName(QStringLiteral("demoProducerRate"));
    m_rate->setRange(0.0, 1000.0);
    m_rate->setDecimals(1);
    m_rate->setSingleStep(5.0);
    m_rate->setSuffix(tr(" events/s"));
    m_rate->setAccelerated(true);
    m_paused = new QCheckBox(tr("Pause producer"));
    m_paused->setObjectName(QStringLiteral("demoPaused"));
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("demoStatus"));
    m_status->setWordWrap(true);

    auto *note = new QLabel(tr("Events of <i>%1/%2</i> go to a runner that always answers "
                               "422: they are retried, then dead-lettered.")
                                .arg(QLatin1String(DemoEnvironment::PoisonNamespace),
                                     QLatin1String(DemoEnvironment::PoisonTopic)));
    note->setWordWrap(true);
    note->setTextFormat(Qt::RichText);
    m_routes = new QLabel;
    m_routes->setObjectName(QStringLiteral("demoRoutes"));
    m_routes->setWordWrap(true);

    // The fleet: the demo's database beside two more with troubles of
    // their own (demofleet.h), made when first asked for.
    m_fleetButton = new QPushButton(tr("Open the &fleet (3 databases)"));
    m_fleetButton->setObjectName(QStringLiteral("demoFleetButton"));
    m_fleetButton->setToolTip(tr("Watch the demo's database and two more with troubles of their "
                                 "own (a dead backlog; no dispatcher) in the fleet view."));
    connect(m_fleetButton, &QPushButton::clicked, this, &DemoPanel::openFleet);
    // Opened once by itself, so that a newcomer sees it at work.
    connect(m_demo, &DemoEnvironment::ready, this, [this] {
        if (!m_fleetShown) {
            m_fleetShown = true;
            openFleet();
        }
    });

    auto *form = new QFormLayout;
    form->addRow(tr("Runner failures"), m_failRate);
    form->addRow(tr("Runner latency"), m_latency);
    form->addRow(tr("Producer rate"), m_rate);
    form->addRow(QString(), m_paused);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(m_routes);
    layout->addWidget(m_status);
    layout->addWidget(m_fleetButton);
    layout->addStretch();

    syncFromDemo();
    connect(m_failRate, &QSpinBox::valueChanged, this,
            [this](int percent) { m_demo->setRunnerFailRate(percent / 100.0); });
    connect(m_latency, &QSpinBox::valueChanged, this,
            [this](int ms) { m_demo->setRunnerLatency(core::Millis(ms)); });
    connect(m_rate, &QDoubleSpinBox::valueChanged, this,
            [this](double rate) { m_demo->setProducerRate(rate); });
    connect(m_paused, &QCheckBox::toggled, this,
            [this](bool paused) { m_demo->setProducerPaused(paused); });
    connect(m_demo, &DemoEnvironment::settingsChanged, this, &DemoPanel::syncFromDemo);
    connect(m_demo, &DemoEnvironment::stateChanged, this, &DemoPanel::updateStatus);
    connect(m_demo, &DemoEnvironment::produced, this, &DemoPanel::updateStatus);
    connect(m_demo, &DemoEnvironment::progress, m_status, &QLabel::setText);
    connect(m_demo, &DemoEnvironment::failed, m_status, &QLabel::setText);
    connect(m_demo, &DemoEnvironment::producerError, m_status, &QLabel::setText);
    updateStatus();
}

DemoPanel::~DemoPanel() {
    delete m_fleet.data();
}

void DemoPanel::openFleet() {
    if (m_fleet) {
        m_fleet->raise();
        m_fleet->activateWindow();
        return;
    }
    if (!m_demo->isReady()) {
        return;
    }
    m_fleetButton->setEnabled(false);
    m_status->setText(tr("Creating the fleet's two other databases…"));
    auto *watcher = new QFutureWatcher<core::Result<QList<store::FleetEntry>>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_fleetButton->setEnabled(m_demo->isReady());
        const auto fleet = watcher->result();
        if (!fleet) {
            m_status->setText(tr("The fleet could not be made: %1").arg(fleet.errorMessage()));
            return;
        }
        if (!m_demo->isReady()) {
            return;
        }
        updateStatus();
        auto *window = new FleetWindow(nullptr, fleet.value(), MainWindowOptions{});
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->show();
        m_fleet = window;
    });
    watcher->setFuture(QtConcurrent::run(prepareDemoFleet, m_demo->connInfo()));
}

void DemoPanel::syncFromDemo() {
    const DemoEnvironment::Settings s = m_demo->settings();
    const QSignalBlocker b1(m_failRate);
    const QSignalBlocker b2(m_latency);
    const QSignalBlocker b3(m_rate);
    const QSignalBlocker b4(m_paused);
    m_failRate->setValue(int(std::lround(s.failRate * 100.0)));
    m_latency->setValue(int(s.latency.count()));
    m_rate->setValue(s.eventsPerSecond);
    m_paused->setChecked(s.producerPaused);
}

void DemoPanel::updateStatus() {
    m_fleetButton->setEnabled(m_demo->isReady());
    switch (m_demo->state()) {
    case DemoEnvironment::State::Idle:
        m_status->setText(tr("Demo not started."));
        break;
    case DemoEnvironment::State::Starting:
        break; // progress() says what happens
    case DemoEnvironment::State::Ready:
        m_routes->setText(tr("Routes:\n") + m_demo->routeDescriptions().join(QLatin1Char('\n')));
        m_status->setText(tr("Demo running: %n event(s) produced.", nullptr,
                             int(std::min<qint64>(m_demo->producedCount(), INT_MAX))));
        break;
    case DemoEnvironment::State::Stopping:
        // Its databases are about to go.
        delete m_fleet.data();
        m_status->setText(tr("Stopping the demo…"));
        break;
    case DemoEnvironment::State::Stopped:
        m_status->setText(tr("Demo stopped; its database was removed."));
        m_routes->clear();
        break;
    case DemoEnvironment::State::Failed:
        break; // failed() shows the reason
    }
}

} // namespace outbox::console
