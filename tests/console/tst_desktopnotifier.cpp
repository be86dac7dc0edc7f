// Alerts reach a desktop without a system tray (the offscreen platform has
// none): through the freedesktop notification service on a session bus of
// the test's own (a real dbus-daemon, with the service registered on a
// second connection of this process), and where there is no service, the
// settings say so and the window is marked urgent.

#include "console/widgets/alertsettingsdialog.h"
#include "console/widgets/desktopnotifier.h"

#include <QCheckBox>
#include <QDBusConnection>
#include <QDBusMessage>
#include <QLabel>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QWidget>
#include <QtTest>

using namespace outbox;
using Channel = console::DesktopNotifier::Channel;

namespace {

const QString kService = QStringLiteral("org.freedesktop.Notifications");
const QString kPath = QStringLiteral("/org/freedesktop/Notifications");

// The service's side, as a notification daemon implements it.
class Notifications final : public QObject {
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Notifications")

public:
    struct Shown {
        QString app, summary, body;
        uint replaces = 0;
        QStringList actions;
    };
    QList<Shown> shown;

public Q_SLOTS:
    QString GetServerInformation(QString &vendor, QString &version, QString &spec) {
        vendor = QStringLiteral("test");
        version = QStringLiteral("1");
        spec = QStringLiteral("1.2");
        return QStringLiteral("test-notifications");
    }
    uint Notify(const QString &app, uint replaces, const QString &, const QString &summary,
                const QString &body, const QStringList &actions, const QVariantMap &, int) {
        shown.append({app, summary, body, replaces, actions});
        return uint(shown.size()) + 100;
    }
};

} // namespace

class TestDesktopNotifier final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        const QString daemon = QStandardPaths::findExecutable(QStringLiteral("dbus-daemon"));
        QVERIFY2(!daemon.isEmpty(),
                 "dbus-daemon is missing: packaging/dev.sh deps installs it (dbus-daemon)");
        QVERIFY(m_dir.isValid());
        m_daemon.setProgram(daemon);
        m_daemon.setArguments(
            {QStringLiteral("--session"), QStringLiteral("--nofork"),
             QStringLiteral("--print-address=1"),
             QStringLiteral("--address=unix:path=") + m_dir.filePath(QStringLiteral("bus"))});
        m_daemon.start();
        QVERIFY2(m_daemon.waitForStarted(10000), qPrintable(m_daemon.errorString()));
        QTRY_VERIFY_WITH_TIMEOUT(m_daemon.canReadLine(), 10000);
        m_address = QString::fromUtf8(m_daemon.readLine()).trimmed();
        QVERIFY2(m_address.startsWith(QLatin1String("unix:")), qPrintable(m_address));
        m_server = QDBusConnection::connectToBus(m_address, QStringLiteral("service"));
        QVERIFY2(m_server.isConnected(), qPrintable(m_server.lastError().message()));
        QVERIFY(m_server.registerObject(kPath, &m_notifications, QDBusConnection::ExportAllSlots));
        QVERIFY(m_server.registerService(kService));
    }

    void cleanupTestCase() {
        QDBusConnection::disconnectFromBus(QStringLiteral("service"));
        QDBusConnection::disconnectFromBus(QStringLiteral("client"));
        m_daemon.terminate();
        m_daemon.waitForFinished(5000);
    }

    // An alert goes to the service, each as a notification of its own, and
    // a click on it (the "default" action) comes back; a click on another
    // application's notification does not.
    void notifiesThroughTheService() {
        QWidget window;
        const QDBusConnection client =
            QDBusConnection::connectToBus(m_address, QStringLiteral("client"));
        console::DesktopNotifier notifier(&window, client);
        QSignalSpy known(&notifier, &console::DesktopNotifier::channelChanged);
        QTRY_COMPARE_WITH_TIMEOUT(known.count(), 1, 10000);
        QCOMPARE(notifier.channel(), Channel::NotificationService);
        QVERIFY(notifier.channelDescription().contains(QLatin1String("notification service")));

        QSignalSpy clicked(&notifier, &console::DesktopNotifier::clicked);
        notifier.notify(QStringLiteral("Events are dying on orders"),
                        QStringLiteral("orders: 12 events died in the last minute <b>"), true);
        notifier.notify(QStringLiteral("Nothing is claimed on orders"), QStringLiteral("x"), true);
        QTRY_COMPARE_WITH_TIMEOUT(m_notifications.shown.size(), 2, 10000);
        const auto &first = m_notifications.shown.first();
        QCOMPARE(first.summary, QStringLiteral("Events are dying on orders"));
        QCOMPARE(first.body, QStringLiteral("orders: 12 events died in the last minute &lt;b&gt;"));
        QCOMPARE(first.replaces, 0u);
        QVERIFY(first.actions.contains(QStringLiteral("default")));
        // Switched off in the settings: the window is still marked, nothing
        // is sent.
        notifier.notify(QStringLiteral("off"), QStringLiteral("off"), false);

        const auto invoke = [this](uint id) {
            QDBusMessage signal =
                QDBusMessage::createSignal(kPath, QStringLiteral("org.freedesktop.Notifications"),
                                           QStringLiteral("ActionInvoked"));
            signal << id << QStringLiteral("default");
            return m_server.send(signal);
        };
        QVERIFY(invoke(999)); // not ours
        QVERIFY(invoke(101));
        QTRY_COMPARE_WITH_TIMEOUT(clicked.count(), 1, 10000);
        QTest::qWait(200);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(m_notifications.shown.size(), 2);
    }

    // A bus without the service, and no bus at all: the channel is None, the
    // settings say so and do not offer notifications, and an alert marks an
    // inactive window urgent.
    void withoutAServiceTheWindowIsMarked() {
        QVERIFY(m_server.unregisterService(kService));
        const QDBusConnection client =
            QDBusConnection::connectToBus(m_address, QStringLiteral("client"));
        const QDBusConnection none = QDBusConnection::connectToBus(
            QStringLiteral("unix:path=") + m_dir.filePath(QStringLiteral("no-bus")),
            QStringLiteral("none"));
        QVERIFY(!none.isConnected());
        for (const QDBusConnection &bus : {client, none}) {
            QWidget window;
            console::DesktopNotifier notifier(&window, bus);
            QSignalSpy known(&notifier, &console::DesktopNotifier::channelChanged);
            QTRY_COMPARE_WITH_TIMEOUT(known.count(), 1, 10000);
            QCOMPARE(notifier.channel(), Channel::None);
            QSignalSpy marked(&notifier, &console::DesktopNotifier::windowMarked);
            notifier.notify(QStringLiteral("Events wait"), QStringLiteral("text"), true);
            QCOMPARE(marked.count(), 1);

            console::AlertSettingsDialog dialog({}, QStringLiteral("orders"),
                                                notifier.channelDescription(), false);
            auto *box = dialog.findChild<QCheckBox *>(QStringLiteral("notifyCheck"));
            auto *where = dialog.findChild<QLabel *>(QStringLiteral("notifyChannelLabel"));
            QVERIFY(box && where);
            QVERIFY(!box->isEnabled());
            QVERIFY2(where->text().contains(QLatin1String("no system tray and no notification")),
                     qPrintable(where->text()));
        }
        QDBusConnection::disconnectFromBus(QStringLiteral("none"));
        QVERIFY(m_server.registerService(kService));
    }

private:
    QTemporaryDir m_dir;
    QProcess m_daemon;
    QString m_address;
    QDBusConnection m_server{QStringLiteral("unset")};
    Notifications m_notifications;
};

QTEST_MAIN(TestDesktopNotifier)
#include "tst_desktopnotifier.moc"
