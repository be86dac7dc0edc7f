#include "dispatch/notifier.h"

#include "core/logline.h"
#include "dispatch/logging.h"
#include "dispatch/storeconnection.h"

namespace outbox::dispatch {

namespace {

store::SessionKeeper::Options keeperOptions(const Notifier::Options &options) {
    store::SessionKeeper::Options keeper;
    keeper.session = dispatcherSessionOptions(options.applicationName);
    keeper.listen = store::SessionKeeper::Listen::Required;
    keeper.debounce = options.debounce;
    keeper.healthCheckInterval = options.healthCheckInterval;
    keeper.reconnectMin = options.reconnectBaseDelay;
    keeper.reconnectMax = options.reconnectMaxDelay;
    return keeper;
}

} // namespace

Notifier::Notifier(core::ConnInfo connInfo, const Options &options, QObject *parent)
    : QObject(parent)
    , m_keeper(std::move(connInfo), keeperOptions(options), this) {
    connect(&m_keeper, &store::SessionKeeper::connected, this, &Notifier::onConnected);
    connect(&m_keeper, &store::SessionKeeper::retrying, this, &Notifier::onRetrying);
    connect(&m_keeper, &store::SessionKeeper::notified, this, &Notifier::notified);
}

Notifier::~Notifier() {
    stop();
}

void Notifier::start() {
    m_keeper.start();
}

void Notifier::stop() {
    m_keeper.stop();
    setListening(false, QStringLiteral("stopped"));
}

void Notifier::onConnected(bool reconnected) {
    qCInfo(lcDispatch) << core::LogLine("listen")
                              .add("channel", store::kNotifyChannel)
                              .add("backend_pid", m_keeper.session().backendPid())
                              .add("reconnects", m_keeper.reconnects());
    setListening(true, QLatin1String("listening on ") % store::kNotifyChannel);
    // The keeper hints after a reconnect; the first subscription began after
    // the dispatcher's first claim, so whatever came in between needs one too.
    if (!reconnected)
        Q_EMIT notified();
}

void Notifier::onRetrying(const QString &reason, core::Millis delay) {
    if (m_listening)
        qCWarning(lcDispatch) << core::LogLine("listen_lost").add("reason", reason);
    setListening(false, reason);
    qCDebug(lcDispatch)
        << core::LogLine("listen_retry").add("in_ms", delay.count()).add("reason", reason);
}

void Notifier::setListening(bool listening, const QString &detail) {
    if (listening == m_listening)
        return;
    m_listening = listening;
    Q_EMIT listeningChanged(listening, detail);
}

} // namespace outbox::dispatch
