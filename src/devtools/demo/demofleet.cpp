#include "devtools/demo/demofleet.h"

#include "store/benchqueries.h"
#include "store/historystore.h"
#include "store/migrator.h"
#include "store/registrystore.h"
#include "store/session.h"

#include <QDateTime>
#include <QSysInfo>

namespace outbox::console {

namespace {

core::Result<void> fill(const core::ConnInfo &info, bool deadBacklog) {
    store::Session session(info, {.applicationName = QStringLiteral("outbox-demo-setup")});
    if (auto opened = session.open(); !opened) {
        return opened.error();
    }
    store::Migrator migrator(session);
    if (auto migrated = migrator.migrate(); !migrated) {
        return migrated.error();
    }
    store::BenchQueries load(session.database());
    if (auto emptied = load.truncate(); !emptied) {
        return emptied.error();
    }
    if (!deadBacklog) {
        // Due now, and nobody claims them.
        return load.addBacklog(240);
    }
    store::DatasetSize size;
    size.delivered = 3000;
    size.dead = 420;
    size.pendingDue = 0;
    size.retrying = 30;
    size.processing = 0;
    if (auto loaded = load.loadDataset(size); !loaded) {
        return loaded.error();
    }
    // A dispatcher that reported deaths in the last minutes and then
    // stopped: the history and the registry say so.
    store::RegistryStore registry(session);
    store::DispatcherRegistration me;
    me.workerId = QUuid::createUuid();
    me.token = store::RegistryStore::newToken();
    me.host = QSysInfo::machineHostName();
    me.pid = 1;
    me.version = QStringLiteral("demo");
    me.application = QStringLiteral("outbox-console-demo");
    me.concurrency = 8;
    me.heartbeatInterval = core::Millis(1000);
    me.startedAt = QDateTime::currentDateTimeUtc();
    if (auto registered = registry.registerDispatcher(me); !registered) {
        return registered.error();
    }
    store::HistoryStore history(session);
    if (auto recorded = history.record(me.workerId, me.token, 180, 40, 14); !recorded) {
        return recorded.error();
    }
    return {};
}

} // namespace

core::Result<QList<store::FleetEntry>> prepareDemoFleet(const core::ConnInfo &demo) {
    QList<store::FleetEntry> fleet;
    fleet.append(
        {QStringLiteral("orders (demo)"), demo, QStringLiteral("demo"), QStringLiteral("you")});
    {
        store::Session admin(demo, {.applicationName = QStringLiteral("outbox-demo-setup")});
        if (auto opened = admin.open(); !opened) {
            return opened.error();
        }
        for (const char *name : {"outbox_demo_payments", "outbox_demo_shipping"}) {
            if (auto created = store::createDatabaseIfMissing(admin, QLatin1String(name));
                !created) {
                return created.error();
            }
        }
    }
    struct Extra {
        const char *name;
        const char *database;
        bool deadBacklog;
        const char *owner;
    };
    for (const Extra &extra : {Extra{"payments", "outbox_demo_payments", true, "team-payments"},
                               Extra{"shipping", "outbox_demo_shipping", false, "team-shipping"}}) {
        core::ConnInfo info = demo;
        info.dbname = QLatin1String(extra.database);
        if (auto filled = fill(info, extra.deadBacklog); !filled) {
            return filled.error();
        }
        fleet.append(
            {QLatin1String(extra.name), info, QStringLiteral("demo"), QLatin1String(extra.owner)});
    }
    return fleet;
}

} // namespace outbox::console
