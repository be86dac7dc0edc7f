#pragma once

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "dispatch/publisher.h"

#include <QObject>
#include <QString>

#include <functional>

class QWidget;

namespace outbox::console {

// Demo mode as the main window sees it. The demo itself (a private cluster,
// development runners, a producer: src/devtools/demo) is linked only by the
// program outbox-console-demo, which gives the window a DemoFactory
// (MainWindowOptions::demo); outbox-console has none and runs that program
// instead (demolauncher.h).
class DemoController : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    Q_DISABLE_COPY_MOVE(DemoController)

    // Emits progress() a few times, then ready() or failed().
    virtual void start() = 0;
    // Stops whatever runs and removes the cluster, asynchronously; then
    // stopped().
    virtual void stop() = 0;
    // Nothing runs: never started, or stopped.
    virtual bool hasStopped() const = 0;

    // Valid after ready(): how the embedded dispatcher delivers in the demo.
    virtual core::DispatcherConfig dispatcherConfig() const = 0;
    virtual dispatch::PublisherFactory publisherFactory() const = 0;
    // The demo's controls, for a dock (the caller owns the widget).
    virtual QWidget *createPanel() = 0;

Q_SIGNALS:
    void progress(const QString &step);
    void ready(const outbox::core::ConnInfo &connInfo);
    void failed(const QString &message);
    void stopped();
};

// Makes a window's demo, a child of `parent`.
using DemoFactory = std::function<DemoController *(QObject *parent)>;

} // namespace outbox::console
