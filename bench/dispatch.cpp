#include "bench/dispatch.h"

#include "bench/harness.h"
#include "dispatch/dispatcherhost.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>

namespace outbox::bench {

core::Result<DispatchRun> runDispatcher(const DispatchPlan &plan) {
    constexpr core::Millis sampleEvery{100}, timeout{1800000}, stallTimeout{60000};
    dispatch::DispatcherHost host(plan.connInfo, plan.config, plan.publisherFactory, plan.options);
    DispatchRun run;
    QEventLoop loop;
    QElapsedTimer clock;
    QString error;
    bool reached = false;
    double lastSample = -1.0;

    QObject::connect(&host, &dispatch::DispatcherHost::started, &loop, [&] {
        clock.start();
        run.rssMbStart = residentMb();
        run.rssMbMax = run.rssMbStart;
        run.samples.append(DeliverySample{0.0, 0});
        lastSample = 0.0;
        if (plan.onStarted)
            plan.onStarted();
    });
    QObject::connect(&host, &dispatch::DispatcherHost::statsSnapshot, &loop,
                     [&](const dispatch::DispatcherStats &stats) {
                         run.stats = stats;
                         if (!clock.isValid() || reached)
                             return;
                         const double seconds = double(clock.nsecsElapsed()) / 1e9;
                         if (stats.delivered >= plan.target) {
                             reached = true;
                             run.seconds = seconds;
                             run.samples.append(DeliverySample{seconds, stats.delivered});
                             run.rssMbEnd = residentMb();
                             run.rssMbMax = std::max(run.rssMbMax, run.rssMbEnd);
                             QTimer::singleShot(0, &loop, [&host] { host.stop(); });
                             return;
                         }
                         if ((seconds - lastSample) * 1000.0 >= double(sampleEvery.count())) {
                             lastSample = seconds;
                             run.samples.append(DeliverySample{seconds, stats.delivered});
                             run.rssMbMax = std::max(run.rssMbMax, residentMb());
                         }
                     });
    QObject::connect(&host, &dispatch::DispatcherHost::failed, &loop,
                     [&](const QString &message) { error = message; });
    QObject::connect(&host, &dispatch::DispatcherHost::stopped, &loop, &QEventLoop::quit);
    // A run that stops making progress fails with a message instead of
    // waiting for the overall timeout.
    qint64 lastDelivered = -1;
    QElapsedTimer sinceProgress;
    sinceProgress.start();
    QElapsedTimer sinceStart;
    sinceStart.start();
    QTimer check;
    QObject::connect(&check, &QTimer::timeout, &loop, [&] {
        if (!error.isEmpty() || reached)
            return;
        if (sinceStart.elapsed() >= timeout.count()) {
            error = QStringLiteral("only %1 of %2 events were delivered within %3")
                        .arg(run.stats.delivered)
                        .arg(plan.target)
                        .arg(core::formatDuration(timeout));
            host.stop();
        } else if (run.stats.delivered != lastDelivered) {
            lastDelivered = run.stats.delivered;
            sinceProgress.restart();
        } else if (sinceProgress.elapsed() >= stallTimeout.count()) {
            error = QStringLiteral("no progress for %1: %2 of %3 events delivered (state %4%5)")
                        .arg(core::formatDuration(stallTimeout))
                        .arg(run.stats.delivered)
                        .arg(plan.target)
                        .arg(dispatch::stateName(run.stats.state),
                             run.stats.lastError.isEmpty()
                                 ? QString()
                                 : QStringLiteral(", last error: ") + run.stats.lastError);
            host.stop();
        }
    });
    check.start(1000);
    host.start();
    loop.exec();
    if (!error.isEmpty())
        return core::Error{core::ErrorKind::Failed, error};
    if (!reached)
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("the dispatcher stopped before delivering every event")};
    return run;
}

} // namespace outbox::bench
