#include "dispatch/retention.h"

#include "core/logline.h"
#include "dispatch/logging.h"
#include "store/retentionstore.h"

#include <QElapsedTimer>
#include <QSysInfo>

#include <algorithm>

namespace outbox::dispatch {

namespace {

// Between two full batches: room for autovacuum and the other sessions. The
// pause is at least kBatchPause and kPauseFactor times what the batch took,
// so retention keeps one connection busy at most 1 / (1 + kPauseFactor) of
// the time however slow the database is (a 50 ms batch of 1000 rows still
// deletes 4000 rows a second, far more than a day's delivery needs).
constexpr core::Millis kBatchPause{20};
constexpr int kPauseFactor = 4;
// The first pass soon after start, not a whole interval later.
constexpr core::Millis kFirstPass{1000};

store::Session::Options sessionOptions(const QString &application) {
    store::Session::Options options;
    options.applicationName = application + QStringLiteral("-retention");
    return options;
}

} // namespace

Retention::Retention(core::ConnInfo connInfo, HousekeepingOptions options, QString application,
                     QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_session(std::move(connInfo), sessionOptions(application))
    , m_timer(this) {
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &Retention::step);
}

Retention::~Retention() {
    m_session.close();
}

void Retention::start() {
    if (!enabled(m_options))
        return;
    m_timer.start(std::min(kFirstPass, m_options.retentionInterval));
}

void Retention::stop() {
    if (m_inPass)
        endPass();
    m_timer.stop();
    m_session.close();
}

bool Retention::beginPass() {
    if (!m_session.isOpen()) {
        if (auto opened = m_session.open(); !opened) {
            qCWarning(lcDispatch)
                << core::LogLine("retention_unavailable").add("error", opened.errorMessage());
            return false;
        }
    }
    // The store (and its handle on the connection) is gone before the
    // session may be closed below.
    auto locked = store::RetentionStore(m_session).tryLock();
    if (!locked) {
        qCWarning(lcDispatch)
            << core::LogLine("retention_failed").add("error", locked.errorMessage());
        m_session.close();
        return false;
    }
    if (!locked.value()) {
        qCDebug(lcDispatch) << core::LogLine("retention_skipped")
                                   .add("reason", "another_dispatcher_holds_the_lock");
        return false;
    }
    m_inPass = true;
    m_deletedInPass = 0;
    m_status = m_options.retainDelivered.count() > 0 ? core::Status::Delivered : core::Status::Dead;
    return true;
}

void Retention::step() {
    if (!m_inPass && !beginPass()) {
        m_timer.start(m_options.retentionInterval);
        return;
    }
    const core::Millis age =
        m_status == core::Status::Delivered ? m_options.retainDelivered : m_options.retainDead;
    QElapsedTimer took;
    took.start();
    auto deleted = store::RetentionStore(m_session).deleteBatch(
        m_status, age, m_options.retentionBatch, QSysInfo::machineHostName());
    if (!deleted) {
        qCWarning(lcDispatch)
            << core::LogLine("retention_failed").add("error", deleted.errorMessage());
        endPass();
        m_session.close(); // also releases the lock if the unlock could not
        return;
    }
    m_deletedInPass += deleted.value();
    const core::Millis pause = std::max(kBatchPause, core::Millis(kPauseFactor * took.elapsed()));
    if (deleted.value() >= m_options.retentionBatch) {
        m_timer.start(pause);
        return;
    }
    if (m_status == core::Status::Delivered && m_options.retainDead.count() > 0) {
        m_status = core::Status::Dead;
        m_timer.start(pause);
        return;
    }
    endPass();
}

void Retention::endPass() {
    if (m_deletedInPass > 0)
        qCInfo(lcDispatch) << core::LogLine("retention").add("deleted", m_deletedInPass);
    m_inPass = false;
    if (m_session.isOpen() && !store::RetentionStore(m_session).unlock())
        m_session.close();
    m_timer.start(m_options.retentionInterval);
}

} // namespace outbox::dispatch
