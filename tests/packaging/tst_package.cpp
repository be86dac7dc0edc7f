// The .deb CPack makes from this build: what it depends on, that its
// binaries are stripped with the symbols in a separate package, and that the
// installed outboxctl, man page, systemd unit and AppStream metadata work when
// unpacked into a scratch root (dpkg-deb -x), against a real cluster. The
// development tools ship as programs of their own beside the production ones
// (outboxctl-runner, outboxctl-bench, outbox-console-demo), which hold none
// of their code (tst_productionlinks).

#include "support/pgfixture.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace outbox::testing;

namespace {

struct Run {
    int exitCode = -1;
    QByteArray output; // stdout and stderr together
};

Run run(const QString &program, const QStringList &arguments, int timeoutMs = 120000) {
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return {-1, "did not finish: " + process.errorString().toUtf8()};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAll()};
}

} // namespace

class TestPackage final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const Run cpack =
            run(QStringLiteral(CPACK_PATH),
                {QStringLiteral("-G"), QStringLiteral("DEB"), QStringLiteral("--config"),
                 QStringLiteral(CPACK_CONFIG), QStringLiteral("-B"), m_dir.path()},
                240000);
        QVERIFY2(cpack.exitCode == 0, cpack.output.constData());
        const QString base = m_dir.filePath(
            QStringLiteral("outbox-console_%1_amd64").arg(QStringLiteral(PACKAGE_VERSION)));
        m_deb = base + QStringLiteral(".deb");
        QVERIFY2(QFile::exists(m_deb), cpack.output.constData());
        m_root = m_dir.filePath(QStringLiteral("root"));
        const Run unpack = run(QStringLiteral("dpkg-deb"), {QStringLiteral("-x"), m_deb, m_root});
        QVERIFY2(unpack.exitCode == 0, unpack.output.constData());
    }

    void dependsNameRunTimePlugins() {
        const Run depends = run(QStringLiteral("dpkg-deb"),
                                {QStringLiteral("-f"), m_deb, QStringLiteral("Depends")});
        QCOMPARE(depends.exitCode, 0);
        // Loaded at run time, invisible to shlibdeps: the QPSQL driver and the
        // SVG plugins that draw every icon of the console.
        for (const char *package :
             {"libqt6sql6-psql", "libqt6svg6", "libpq5", "libqt6core6", "librdkafka1"})
            QVERIFY2(depends.output.contains(package), depends.output.constData());
    }

    void binariesAreStrippedWithSymbolsApart() {
        QStringList binaries{QStringLiteral("usr/bin/outboxctl"),
                             QStringLiteral("usr/bin/outboxctl-runner"),
                             QStringLiteral("usr/bin/outboxctl-bench")};
#ifdef OUTBOX_PACKAGE_HAS_CONSOLE
        binaries << QStringLiteral("usr/bin/outbox-console")
                 << QStringLiteral("usr/bin/outbox-console-demo");
#endif
        for (const QString &binary : binaries) {
            const QString path = m_root + QLatin1Char('/') + binary;
            QVERIFY2(QFile::exists(path), qPrintable(binary));
            const Run sections = run(QStringLiteral("readelf"), {QStringLiteral("-S"), path});
            QCOMPARE(sections.exitCode, 0);
            QVERIFY2(!sections.output.contains(".debug_info"), qPrintable(binary));
        }
        // The symbols: a -dbgsym package beside it, keyed by build id.
        const QStringList ddebs =
            QDir(m_dir.path()).entryList({QStringLiteral("outbox-console-dbgsym_*.ddeb")});
        QCOMPARE(ddebs.size(), 1);
        const Run contents =
            run(QStringLiteral("dpkg-deb"), {QStringLiteral("-c"), m_dir.filePath(ddebs.first())});
        QCOMPARE(contents.exitCode, 0);
        QVERIFY2(contents.output.contains("/usr/lib/debug/.build-id/"),
                 contents.output.constData());
        QVERIFY(QFileInfo(m_deb).size() < QFileInfo(m_dir.filePath(ddebs.first())).size());
    }

    void installedOutboxctlMigratesARealDatabase() {
        const QString outboxctl = m_root + QStringLiteral("/usr/bin/outboxctl");
        const Run version = run(outboxctl, {QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QCOMPARE(version.output.trimmed(), QByteArray("outboxctl ") + QByteArray(PACKAGE_VERSION));

        PgFixture pg;
        OUTBOX_START_PG(pg);
        const QString db = pg.freshDatabase();
        QVERIFY(!db.isEmpty());
        const QString connInfo = pg.connInfo(db);
        const Run migrate =
            run(outboxctl, {QStringLiteral("--db"), connInfo, QStringLiteral("migrate"),
                            QStringLiteral("--with-roles")});
        QVERIFY2(migrate.exitCode == 0, migrate.output.constData());
        const Run again =
            run(outboxctl, {QStringLiteral("--db"), connInfo, QStringLiteral("migrate")});
        QVERIFY2(again.exitCode == 0, again.output.constData());
        QVERIFY2(again.output.contains("up to date"), again.output.constData());
        const Run enqueue =
            run(outboxctl, {QStringLiteral("--db"), connInfo, QStringLiteral("enqueue"),
                            QStringLiteral("--namespace"), QStringLiteral("billing"),
                            QStringLiteral("--topic"), QStringLiteral("invoice.paid"),
                            QStringLiteral("--payload"), QStringLiteral("{\"invoice\": 42}")});
        QVERIFY2(enqueue.exitCode == 0, enqueue.output.constData());
        const Run stats = run(outboxctl, {QStringLiteral("--db"), connInfo, QStringLiteral("stats"),
                                          QStringLiteral("--json")});
        QVERIFY2(stats.exitCode == 0, stats.output.constData());
        QVERIFY2(stats.output.contains("invoice.paid"), stats.output.constData());
    }

    // `outboxctl runner` runs the outboxctl-runner installed beside it.
    void installedOutboxctlRunsItsTools() {
        const QString outboxctl = m_root + QStringLiteral("/usr/bin/outboxctl");
        for (const char *tool : {"runner", "bench"}) {
            const Run help = run(outboxctl, {QString::fromLatin1(tool), QStringLiteral("--help")});
            QVERIFY2(help.exitCode == 0, help.output.constData());
            QVERIFY2(help.output.startsWith(QByteArray(QByteArray("Usage: outboxctl ") + tool)),
                     help.output.constData());
        }
    }

    void manPageCoversEveryCommand() {
        const QString page = m_root + QStringLiteral("/usr/share/man/man1/outboxctl.1.gz");
        QVERIFY(QFile::exists(page));
        const Run text = run(QStringLiteral("gzip"), {QStringLiteral("-dc"), page});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.output.startsWith(".TH OUTBOXCTL 1"));
        for (const char *command : {"migrate", "enqueue", "list", "show", "requeue", "purge",
                                    "replay", "dispatch", "runner"})
            QVERIFY2(text.output.contains(QByteArray(".SS ").append(command).append('\n')),
                     command);
    }

    void systemdUnitVerifies() {
        const QString unit =
            m_root + QStringLiteral("/usr/lib/systemd/system/outbox-dispatch@.service");
        QFile file(unit);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QByteArray text = file.readAll();
        for (const char *line :
             {"ExecStart=/usr/bin/outboxctl dispatch ", "EnvironmentFile=/etc/outbox/%i.env",
              "DynamicUser=yes", "ProtectSystem=strict", "NoNewPrivileges=yes",
              "Restart=on-failure", "RestartPreventExitStatus=2"})
            QVERIFY2(text.contains(line), line);
        const QString analyze = QStandardPaths::findExecutable(QStringLiteral("systemd-analyze"));
        if (analyze.isEmpty())
            QSKIP("systemd-analyze is not installed");
        // verify looks for ExecStart's program on this machine: point it at
        // the unpacked one, in an instance of the template.
        text.replace("/usr/bin/outboxctl",
                     (m_root + QStringLiteral("/usr/bin/outboxctl")).toUtf8());
        QFile instance(m_dir.filePath(QStringLiteral("outbox-dispatch@test.service")));
        QVERIFY(instance.open(QIODevice::WriteOnly));
        instance.write(text);
        instance.close();
        const Run verify = run(
            analyze, {QStringLiteral("verify"), QStringLiteral("--man=no"), instance.fileName()});
        QVERIFY2(verify.exitCode == 0, verify.output.constData());
    }

    void appStreamMetadataValidates() {
#ifndef OUTBOX_PACKAGE_HAS_CONSOLE
        QSKIP("the console is not built (OUTBOX_BUILD_CONSOLE=OFF)");
#endif
        const QString metainfo =
            m_root +
            QStringLiteral("/usr/share/metainfo/org.outboxconsole.OutboxConsole.metainfo.xml");
        QVERIFY(QFile::exists(metainfo));
        QVERIFY(QFile::exists(m_root +
                              QStringLiteral("/usr/share/applications/outbox-console.desktop")));
        const Run validate =
            run(QStringLiteral("appstreamcli"),
                {QStringLiteral("validate"), QStringLiteral("--no-net"), metainfo});
        QVERIFY2(validate.exitCode == 0, validate.output.constData());
    }

private:
    QTemporaryDir m_dir;
    QString m_deb;
    QString m_root;
};

QTEST_GUILESS_MAIN(TestPackage)
#include "tst_package.moc"
