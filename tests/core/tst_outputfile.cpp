// core::OutputFile, the one way exports open their target: never through a
// link, never onto a device, an existing file only when asked, readable by
// the owner only; and core::displaytext, what people see of text others wrote.

#include "core/displaytext.h"
#include "core/outputfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using outbox::core::ErrorKind;
using outbox::core::OutputFile;

namespace {

QByteArray contentOf(const QString &path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool writeFile(const QString &path, const QByteArray &content) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
}

mode_t modeOf(const QString &path) {
    struct stat st {};
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_mode : 0;
}

// Only the temporary files of OutputFile start with a dot here.
QStringList leftovers(const QTemporaryDir &dir) {
    return QDir(dir.path())
        .entryList(QDir::Hidden | QDir::Files | QDir::System)
        .filter(QRegularExpression(QStringLiteral("^\\.")));
}

} // namespace

class TestOutputFile final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void newFileIsOwnerOnly() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.jsonl"));
        const mode_t old = ::umask(022); // the usual one: files would be 0644
        auto file = OutputFile::create(path, OutputFile::Existing::Refuse);
        ::umask(old);
        QVERIFY2(file.ok(), qPrintable(file.errorMessage()));
        QVERIFY(!QFile::exists(path)); // nothing under the name until complete
        file.value()->device().write("line\n");
        QVERIFY(file.value()->commit().ok());
        QCOMPARE(contentOf(path), QByteArray("line\n"));
        QCOMPARE(modeOf(path) & 0777, mode_t(0600));
        QVERIFY(S_ISREG(modeOf(path)));
        QVERIFY(leftovers(dir).isEmpty());
    }

    void symbolicLinkIsRefused() {
        QTemporaryDir dir;
        const QString victim = dir.filePath(QStringLiteral("victim"));
        QVERIFY(writeFile(victim, "precious\n"));
        const QString link = dir.filePath(QStringLiteral("out.jsonl"));
        QVERIFY(QFile::link(victim, link));
        for (const auto existing : {OutputFile::Existing::Refuse, OutputFile::Existing::Replace}) {
            auto file = OutputFile::create(link, existing);
            QVERIFY(!file.ok());
            QCOMPARE(file.errorKind(), ErrorKind::Invalid);
            QVERIFY2(file.errorMessage().contains(QLatin1String("symbolic link")),
                     qPrintable(file.errorMessage()));
        }
        QCOMPARE(contentOf(victim), QByteArray("precious\n"));
        QVERIFY(leftovers(dir).isEmpty());
    }

    // The link is planted while the export runs: the move refuses it too.
    void linkPlantedMeanwhileIsRefused() {
        QTemporaryDir dir;
        const QString victim = dir.filePath(QStringLiteral("victim"));
        QVERIFY(writeFile(victim, "precious\n"));
        const QString path = dir.filePath(QStringLiteral("out.jsonl"));
        auto file = OutputFile::create(path, OutputFile::Existing::Replace);
        QVERIFY(file.ok());
        file.value()->device().write("payloads\n");
        QVERIFY(QFile::link(victim, path));
        const auto committed = file.value()->commit();
        QVERIFY(!committed.ok());
        QVERIFY2(committed.errorMessage().contains(QLatin1String("symbolic link")),
                 qPrintable(committed.errorMessage()));
        QCOMPARE(contentOf(victim), QByteArray("precious\n"));
        QVERIFY(QFileInfo(path).isSymLink());
        QVERIFY(leftovers(dir).isEmpty());
    }

    void specialFilesAreRefused() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath(QStringLiteral("fifo"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        const QString device = dir.filePath(QStringLiteral("null"));
        // A character device like /dev/null (root only; a pipe stands in otherwise).
        const bool haveDevice =
            ::mknod(QFile::encodeName(device).constData(), S_IFCHR | 0666, makedev(1, 3)) == 0;
        QStringList targets{fifo, dir.path()};
        if (haveDevice)
            targets << device;
        for (const QString &target : std::as_const(targets)) {
            const mode_t before = modeOf(target);
            auto file = OutputFile::create(target, OutputFile::Existing::Replace);
            QVERIFY2(!file.ok(), qPrintable(target));
            QVERIFY2(file.errorMessage().contains(QLatin1String("not a regular file")),
                     qPrintable(file.errorMessage()));
            QCOMPARE(modeOf(target), before); // still what it was
        }
        if (!haveDevice)
            qInfo("no device node test: mknod needs root");
    }

    void existingFileOnlyWhenAsked() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.jsonl"));
        QVERIFY(writeFile(path, "old\n"));
        auto refused = OutputFile::create(path, OutputFile::Existing::Refuse,
                                          QStringLiteral("add --overwrite to replace it"));
        QVERIFY(!refused.ok());
        QCOMPARE(refused.errorKind(), ErrorKind::Conflict);
        QCOMPARE(refused.errorMessage(),
                 path + QStringLiteral(" already exists; add --overwrite to replace it"));
        QCOMPARE(contentOf(path), QByteArray("old\n"));

        QVERIFY(QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                QFileDevice::ReadOther));
        auto replaced = OutputFile::create(path, OutputFile::Existing::Replace);
        QVERIFY(replaced.ok());
        replaced.value()->device().write("new\n");
        QVERIFY(replaced.value()->commit().ok());
        QCOMPARE(contentOf(path), QByteArray("new\n"));
        QCOMPARE(modeOf(path) & 0777, mode_t(0600));
    }

    // A file that appears while a "do not replace" export runs is kept.
    void fileAppearingMeanwhileIsKept() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.jsonl"));
        auto file = OutputFile::create(path, OutputFile::Existing::Refuse);
        QVERIFY(file.ok());
        file.value()->device().write("payloads\n");
        QVERIFY(writeFile(path, "someone else's\n"));
        const auto committed = file.value()->commit();
        QVERIFY(!committed.ok());
        QCOMPARE(committed.errorKind(), ErrorKind::Conflict);
        QCOMPARE(contentOf(path), QByteArray("someone else's\n"));
        QVERIFY(leftovers(dir).isEmpty());
    }

    void cancelLeavesNothing() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("out.jsonl"));
        {
            auto file = OutputFile::create(path, OutputFile::Existing::Refuse);
            QVERIFY(file.ok());
            file.value()->device().write("half\n");
        } // destroyed without commit
        QVERIFY(!QFile::exists(path));
        QVERIFY(leftovers(dir).isEmpty());
    }

    void controlsAreEscaped_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("shown");
        QTest::newRow("plain") << QStringLiteral("invoice.paid") << QStringLiteral("invoice.paid");
        QTest::newRow("title") << QStringLiteral("a\x1b]0;pwned\x07z")
                               << QStringLiteral("a\\x1b]0;pwned\\x07z");
        QTest::newRow("clear") << QStringLiteral("\x1b[2J\x1b[H")
                               << QStringLiteral("\\x1b[2J\\x1b[H");
        QTest::newRow("lines") << QStringLiteral("a\r\nb\tc")
                               << QStringLiteral("a\\x0d\\x0ab\\x09c");
        QTest::newRow("del") << QStringLiteral("a\x7f") << QStringLiteral("a\\x7f");
        QTest::newRow("c1 csi") << (QStringLiteral("a") + QChar(0x9b) + QStringLiteral("31m"))
                                << QStringLiteral("a\\u009b31m");
        QTest::newRow("nul") << QString(QChar(0)) << QStringLiteral("\\x00");
        QTest::newRow("unicode") << QStringLiteral("Grüße ✓") << QStringLiteral("Grüße ✓");
    }
    void controlsAreEscaped() {
        QFETCH(QString, text);
        QFETCH(QString, shown);
        QCOMPARE(outbox::core::escapeControls(text), shown);
        QCOMPARE(outbox::core::escapeControls(QStringLiteral("a\nb"), true),
                 QStringLiteral("a\nb"));
    }

    void jsonStaysJson() {
        const QString value = QStringLiteral("x\x1b[31m") + QChar(0x9b) + QStringLiteral("y\x7fz");
        const QByteArray json =
            QJsonDocument(QJsonObject{{QStringLiteral("k"), value}}).toJson(QJsonDocument::Compact);
        const QByteArray escaped = outbox::core::escapeJsonControls(json);
        for (const char c : escaped)
            QVERIFY2(uchar(c) >= 0x20 && uchar(c) != 0x7f, escaped.constData());
        QVERIFY(!escaped.contains("\xc2\x9b"));
        QCOMPARE(QJsonDocument::fromJson(escaped).object().value(QLatin1String("k")).toString(),
                 value);
    }

    void urlsLoseTheirCredentials() {
        const QUrl url(QStringLiteral("https://user:pw@runner.example:8443/events?api_key=K#frag"));
        QCOMPARE(outbox::core::redactedUrl(url),
                 QStringLiteral("https://***@runner.example:8443/events?***"));
        QCOMPARE(outbox::core::urlWithoutCredentials(url).toString(),
                 QStringLiteral("https://runner.example:8443/events"));
        QCOMPARE(outbox::core::redactedUrl(QUrl(QStringLiteral("http://127.0.0.1:8080/e"))),
                 QStringLiteral("http://127.0.0.1:8080/e"));
        QCOMPARE(outbox::core::redactedUrlText(QStringLiteral("http://u:p@h/e\r\nX: y?key=K")),
                 QStringLiteral("http://***@h/e\\x0d\\x0aX: y?***"));
    }
};

QTEST_GUILESS_MAIN(TestOutputFile)
#include "tst_outputfile.moc"
